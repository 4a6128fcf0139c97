module github.com/excalibot/excalibot

go 1.26
