package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/excalibot/excalibot/scene/fontmetrics/internal/browser"
)

// Golden cases are whole strings, not the characters of the tables, so the
// tests check the model (advances + pair corrections) against what canvas
// measures for real text.

var measureTexts = []string{
	"Load balancer", "API Gateway", "User Service", "PostgreSQL 15", "Kafka → consumers",
	"Hello, World!", "AVATAR WAVE Typography", "The quick brown fox jumps over the lazy dog",
	"0123456789", "v1.2.3-rc.4 (beta)", "“Quotes” — dashes – and… ellipsis", "Café crème brûlée",
	"Łódź Gdańsk Kraków", "Straße Größe", "naïve façade", "Ångström Øresund", "iOS/macOS & Windows",
	"e-mail@example.com", "$100 + 20% = €120", "TODO: fix #42 [urgent]", "mixed CaSe WoRdS",
	"  leading and trailing  ", "fi fl ffi office", "Tick, tock; it's 12:30?",
	"Пользователь", "База данных", "Сервер приложений", "Очередь сообщений", "ЁЛКИ-ПАЛКИ",
	"Україна: Київ", "Щука и ёж", "Привет, мир!",
	"Ελληνικά", "Αθήνα", "ΑΒΓΔΕΖΗΘ", "Καλημέρα κόσμε", "λόγος και ψυχή", "ΩΜΕΓΑ ωμέγα",
	"Server Сервер Σέρβερ", "HTTP/2 → gRPC", "x² + y² = z²", "α-β pruning", "№ 5, 10 °C ± 2",
}

// safeTexts are scripts the tables do not cover: the estimate must never be
// narrower than what Chromium measures for them.
var safeTexts = []string{
	"数据库服务器", "ユーザー管理", "사용자 서비스", "東京 Tokyo", "😀 Happy", "🚀 Deploy 🔥",
	"👨‍👩‍👧 family", "🇺🇸🇩🇪", "مرحبا بالعالم", "שלום עולם", "नमस्ते दुनिया", "สวัสดีชาวโลก",
	"ქართული", "Հայերեն", "𝐁𝐨𝐥𝐝 math", "✅ done ❌ failed", "☀ ☁ ★", "e\u0301 decomposed",
}

var tokenLines = []string{
	"Hello world", "Hello-world", "Hello(한글)", "Hello た。", "Hello「た」 World", "Price￥100",
	"漢字かなカナ한글", "a  b   c", "  lead", "trail  ", "emoji 😀😀 test", "👨‍👩‍👧‍👦 fam",
	"🇺🇸🇩🇪flags", "👍🏽 ok", "1️⃣ keycap", "©2024 ®", "a-b-c--d", "x/y.z,w;v!u?t…s", "<a>(b)[c]{d}",
	"日本語のテキストです。次の文。", "（括弧）「鉤括弧」", "don't stop", "e\u0301 decomposed",
	"mixed中文English混合", "tab\there", "nbsp\u00a0here", "ideographic\u3000space", "‼ ⁉ ™ ↔",
	"價格：＄100（含稅）", "「引用」と『二重』", "one—two – three", "a)(b", "x ) ( y", "1,000.50",
	"ハロー・ワールド", "〜波ダッシュ〜", "ー長音", "-leading", "trailing-", "Ελληνικά-λέξεις", "Пользователь-сервер",
}

var wrapTexts = []string{
	"Load balancer", "The quick brown fox jumps over the lazy dog", "Authentication Service",
	"https://example.com/a/very/long/path/without/spaces", "Supercalifragilisticexpialidocious",
	"Пользовательский интерфейс администратора", "Ελληνικά γράμματα και λέξεις",
	"first line\nsecond much longer line here", "trailing spaces   ", "  leading spaces",
	"multiple   spaces   between", "well-known hyphen-separated words", "漢字かなカナ混じりの日本語テキストです。",
	"Hello(한글) world", "Price￥100 and more", "a b c d e f g h i j k l", "x", "", "WWWWWWWWWW",
	"iiiiiiiiiiiiiiii", "end.", "Kafka → consumers (3 partitions)", "AVAVAVAV AVAVAV", "a\n\nb  \n  c",
}

// scriptSamples are labels as people write them in diagrams, per script, with
// the Latin, digits and punctuation real labels mix in: scripts.golden.json
// holds Chromium's width of each at scriptSizes in every family.
var scriptSamples = []struct {
	script string
	labels []string
}{
	{"latin", []string{"Load balancer", "User Service", "PostgreSQL replica", "Authentication & Authorization",
		"Kafka topic: orders.v2", "Send e-mail (async)", "Café crème — naïve façade"}},
	{"cyrillic", []string{"Пользователь", "Сервис авторизации пользователей", "Отправить запрос на сервер",
		"Проверка подписи токена (JWT)", "База данных «Заказы»", "Очередь сообщений RabbitMQ",
		"Ответ 200 OK — данные профиля", "Україна: Київ, Львів", "Ещё раз? Объём: 5 ГБ"}},
	{"greek", []string{"Διακομιστής βάσης δεδομένων", "Χρήστης", "Έλεγχος ταυτότητας", "Αίτημα πληρωμής (API)",
		"ΒΆΣΗ ΔΕΔΟΜΈΝΩΝ", "Απάντηση: επιτυχία!"}},
	{"chinese", []string{"用户登录", "数据库服务器连接池", "订单服务（Order Service）", "发送验证码到手机",
		"支付网关：回调通知", "負載平衡器與快取", "消息队列 Kafka", "是否已登录？"}},
	{"japanese", []string{"ユーザー認証サービス", "注文を確定する", "データベースに保存します。", "「在庫」を確認",
		"ログイン画面へ戻る"}},
	{"korean", []string{"데이터베이스 서버", "사용자 인증 서비스", "주문 생성 요청", "결제 완료!"}},
	{"mixed", []string{"API 网关 Gateway", "Сервер API v2", "Σ = 10 €", "東京 Tokyo → Москва"}},
}

var scriptSizes = []float64{14, 16, 20, 28, 36}

// scriptWrapTexts are longer texts per script, wrapped at scriptWrapSizes and
// scriptWrapWidths into wrap.golden.json. The widths include 176, 220 and
// 240 px, where whole numbers of 1 em CJK characters at 16 and 20 px meet the
// limit exactly (an arrow label wraps at 11 × its font size).
var scriptWrapTexts = []string{
	"Пользователь отправляет запрос на сервер авторизации и получает токен",
	"Ο χρήστης στέλνει αίτημα στον διακομιστή και λαμβάνει απάντηση",
	"用户在登录页面输入手机号码，系统发送验证码并校验后返回访问令牌。",
	"ユーザーはログイン画面でメールアドレスを入力し、「送信」ボタンを押します。",
	"사용자가 로그인 화면에서 이메일을 입력하고 전송 버튼을 누릅니다.",
	"订单服务（Order Service）调用支付网关 Payment Gateway 完成扣款",
	"負載平衡器將請求分配到多個應用伺服器，並檢查健康狀態。",
}

var (
	scriptWrapSizes  = []float64{16, 20}
	scriptWrapWidths = []float64{60, 105, 150, 176, 195, 220, 240, 285, 330, 375, 420}
)

var (
	measureSizes = []float64{16, 20, 28, 36}
	wrapSizes    = []float64{20, 36}
	wrapWidths   = []float64{0, 40, 90, 150, 260}
)

// MeasureCase is one golden width: canvas measureText(text).width.
type MeasureCase struct {
	Family int     `json:"family"`
	Size   float64 `json:"size"`
	Text   string  `json:"text"`
	Width  float64 `json:"width"`
}

// ScriptCase is one golden width of a sample label of a script.
type ScriptCase struct {
	Family int     `json:"family"`
	Size   float64 `json:"size"`
	Script string  `json:"script"`
	Text   string  `json:"text"`
	Width  float64 `json:"width"`
}

// TokensCase is Excalidraw's parseTokens of one line.
type TokensCase struct {
	Line   string   `json:"line"`
	Tokens []string `json:"tokens"`
}

// WrapCase is Excalidraw's wrapText of one text.
type WrapCase struct {
	Family   int     `json:"family"`
	Size     float64 `json:"size"`
	MaxWidth float64 `json:"maxWidth"`
	Text     string  `json:"text"`
	Want     string  `json:"want"`
}

func writeGoldens(b *browser.Browser, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("make %s: %w", dir, err)
	}
	for _, set := range []struct {
		file  string
		texts []string
	}{{"measure.golden.json", measureTexts}, {"safe.golden.json", safeTexts}} {
		var cases []MeasureCase
		for _, f := range browser.Families {
			for _, size := range measureSizes {
				ws, err := b.MeasureStrings(browser.FontString(f.ID, size), set.texts)
				if err != nil {
					return fmt.Errorf("measure %s at %v: %w", f.Name, size, err)
				}
				for i, t := range set.texts {
					cases = append(cases, MeasureCase{Family: f.ID, Size: size, Text: t, Width: ws[i]})
				}
			}
		}
		if err := writeJSONLines(filepath.Join(dir, set.file), cases); err != nil {
			return err
		}
	}

	var scases []ScriptCase
	for _, f := range browser.Families {
		for _, size := range scriptSizes {
			for _, sc := range scriptSamples {
				ws, err := b.MeasureStrings(browser.FontString(f.ID, size), sc.labels)
				if err != nil {
					return fmt.Errorf("measure %s %s labels at %v: %w", f.Name, sc.script, size, err)
				}
				for i, t := range sc.labels {
					scases = append(scases, ScriptCase{Family: f.ID, Size: size, Script: sc.script, Text: t, Width: ws[i]})
				}
			}
		}
	}
	if err := writeJSONLines(filepath.Join(dir, "scripts.golden.json"), scases); err != nil {
		return err
	}

	toks, err := b.Tokens(tokenLines)
	if err != nil {
		return fmt.Errorf("tokenize: %w", err)
	}
	tcases := make([]TokensCase, len(tokenLines))
	for i, l := range tokenLines {
		tcases[i] = TokensCase{Line: l, Tokens: toks[i]}
	}
	if err := writeJSONLines(filepath.Join(dir, "tokens.golden.json"), tcases); err != nil {
		return err
	}

	var wcases []WrapCase
	var calls []browser.WrapCase
	for _, f := range browser.Families {
		for _, size := range wrapSizes {
			for _, mw := range wrapWidths {
				for _, t := range wrapTexts {
					wcases = append(wcases, WrapCase{Family: f.ID, Size: size, MaxWidth: mw, Text: t})
					calls = append(calls, browser.WrapCase{Text: t, Font: browser.FontString(f.ID, size), MaxWidth: mw})
				}
			}
		}
	}
	for _, f := range browser.Families {
		for _, size := range scriptWrapSizes {
			for _, mw := range scriptWrapWidths {
				for _, t := range scriptWrapTexts {
					wcases = append(wcases, WrapCase{Family: f.ID, Size: size, MaxWidth: mw, Text: t})
					calls = append(calls, browser.WrapCase{Text: t, Font: browser.FontString(f.ID, size), MaxWidth: mw})
				}
			}
		}
	}
	got, err := b.Wrap(calls)
	if err != nil {
		return fmt.Errorf("wrap: %w", err)
	}
	for i := range wcases {
		wcases[i].Want = got[i]
	}
	return writeJSONLines(filepath.Join(dir, "wrap.golden.json"), wcases)
}

// writeJSONLines writes a JSON array with one element per line: diffable.
func writeJSONLines[T any](path string, items []T) error {
	var buf bytes.Buffer
	buf.WriteString("[\n")
	for i, it := range items {
		line, err := json.Marshal(it)
		if err != nil {
			return fmt.Errorf("marshal %s item %d: %w", path, i, err)
		}
		buf.Write(line)
		if i < len(items)-1 {
			buf.WriteByte(',')
		}
		buf.WriteByte('\n')
	}
	buf.WriteString("]\n")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
