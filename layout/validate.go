package layout

// Validate reports what Layout would refuse in g (an error wrapping ErrInvalid), so that another
// engine given the same Graph (layout/elk) refuses the same graphs.
func Validate(g Graph) error { return check(g) }
