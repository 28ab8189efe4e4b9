// Package calc is a small toolset for what language models get wrong:
// exact arithmetic, and dates and times across time zones.
//
// Tools returns its tools, ready for an agent or an MCP server. Importing
// the package also registers the toolset as "calc" with package toolsets,
// which opens it with no options (nil).
package calc

import (
	"context"
	"fmt"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/toolsets"
)

func init() {
	toolsets.Register("calc", func(context.Context, struct{}) (toolsets.Toolset, error) { return toolset{}, nil })
}

// Tools returns the toolset's tools.
func Tools() []tool.Tool {
	return []tool.Tool{calculate(TimeBudget), now(), convertTime(), timeBetween()}
}

// toolset is calc opened by package toolsets: it holds nothing to close.
type toolset struct{}

func (toolset) Tools() []tool.Tool { return Tools() }
func (toolset) Close() error       { return nil }

// The cost bounds of calculate: no expression it accepts costs more than
// a few milliseconds of CPU per operation, nor runs longer than its time
// budget, nor answers with more than MaxDigits digits.
const (
	// MaxDigits bounds every number calculate works with: an integer or
	// fraction of at most MaxDigits digits, a floating-point number
	// between 10^-MaxDigits and 10^MaxDigits in magnitude. An operation
	// whose result would be larger is refused before it is computed
	// (pow) or as soon as it is (the others, whose cost the bounded
	// operands bound).
	MaxDigits = 20000
	// MaxExpressionLength bounds an expression, in bytes.
	MaxExpressionLength = 100000
	// TimeBudget bounds the time calculate spends on one expression; it
	// stops at once, too, when its call is cancelled.
	TimeBudget = 5 * time.Second
)

// maxBits is MaxDigits in bits: log2(10) = 3.3219… bits a digit.
const maxBits = MaxDigits * 33220 / 10000

func ptr[T any](v T) *T { return &v }

// typed makes a read-only tool of fn.
func typed[In any](name, title, description string, idempotent bool, fn func(context.Context, In) (*tool.Result, error)) tool.Tool {
	return tool.Must(tool.New(name, description, fn)).WithInfo(func(i *tool.Info) {
		i.Title = title
		i.Annotations = &tool.Annotations{ReadOnlyHint: ptr(true), DestructiveHint: ptr(false), IdempotentHint: ptr(idempotent), OpenWorldHint: ptr(false)}
	})
}

type calculateArgs struct {
	Expression string `json:"expression" description:"The expression to evaluate, e.g. (2 + 3) * 4"`
}

// calculate makes the calculate tool, which stops an expression at the
// time budget given.
func calculate(budget time.Duration) tool.Tool {
	overBudget := fmt.Errorf("calculate stopped at its time budget of %s: simplify the expression or split it into smaller calculations", budget)
	return typed("calculate", "Calculate",
		"Evaluates an arithmetic expression exactly (arbitrary precision for + - * / and integer %; no ^ or **, use pow), "+
			"e.g. \"(17.5 * 4) / 3\" or \"pow(2, 100)\". Functions: sqrt, pow (exact for whole numbers), abs, floor, ceil, round, ln, log10, exp, sin, cos, tan (radians); constants pi and e. "+
			fmt.Sprintf("Numbers up to %d digits.", MaxDigits),
		true, func(ctx context.Context, in calculateArgs) (*tool.Result, error) {
			ctx, cancel := context.WithTimeoutCause(ctx, budget, overBudget)
			defer cancel()
			v, err := Evaluate(ctx, in.Expression)
			if err != nil {
				return nil, err
			}
			return &tool.Result{Content: []tool.Content{tool.TextContent(v)}, StructuredContent: map[string]string{"value": v}}, nil
		})
}

// Evaluate evaluates an arithmetic expression and returns its value as
// text: exact for + - * / and integer %, floating point for functions.
// It refuses expressions past the bounds MaxExpressionLength and
// MaxDigits, and stops, with context.Cause(ctx), when ctx is done.
func Evaluate(ctx context.Context, expr string) (string, error) {
	if len(expr) > MaxExpressionLength {
		return "", fmt.Errorf("the expression is %d bytes long; calculate takes expressions of up to %d bytes: split it into smaller calculations", len(expr), MaxExpressionLength)
	}
	e, err := parser.ParseExpr(expr)
	if err != nil {
		return "", fmt.Errorf("cannot parse expression %s: %v", clip(expr), err)
	}
	ev := evaluator{ctx: ctx, src: expr}
	v, err := ev.eval(e)
	if err != nil {
		return "", fmt.Errorf("cannot evaluate %s: %w", clip(expr), err)
	}
	digits := 20
	if ev.inexact {
		digits = 15 // float64 arithmetic: no more digits than it has
	}
	return format(v, digits), nil
}

// clip quotes an expression for an error message, shortened when long.
func clip(expr string) string {
	if len(expr) > 80 {
		return strconv.Quote(expr[:60]) + fmt.Sprintf(" (%d bytes)", len(expr))
	}
	return strconv.Quote(expr)
}

// bounded returns v, or an error when v is past MaxDigits.
func bounded(v constant.Value) (constant.Value, error) {
	if b := bitSize(v); b > maxBits {
		return nil, fmt.Errorf("a number in it needs about %d digits; calculate works within %d digits", digitsOf(b), MaxDigits)
	}
	return v, nil
}

// bitSize is what v costs to compute with: the bits of an integer, of a
// fraction's numerator or denominator, or of a floating-point number's
// binary exponent (which decides the cost of its decimal form).
func bitSize(v constant.Value) int {
	switch x := constant.Val(v).(type) {
	case *big.Int:
		return x.BitLen()
	case *big.Rat:
		return max(x.Num().BitLen(), x.Denom().BitLen())
	case *big.Float:
		e := x.MantExp(nil)
		return max(e, -e)
	}
	return 0 // int64, and unknown values
}

// digitsOf is the number of decimal digits of a number of b bits, about.
func digitsOf(b int) int64 { return int64(float64(b) * math.Log10(2)) }

// evaluator evaluates an expression until ctx is done, noting whether
// floating-point functions made the result inexact.
type evaluator struct {
	ctx     context.Context
	src     string // the expression, for messages
	inexact bool
}

// text returns the source of a node, for messages.
func (ev *evaluator) text(n ast.Node) string {
	return ev.src[n.Pos()-1 : n.End()-1] // positions count from 1
}

// powerHint refuses x op y, op an operator other languages use for
// powers, with the call of pow to write instead when x and y are simple
// enough to tell (else the form of the call).
func (ev *evaluator) powerHint(op string, x, y ast.Expr, at token.Pos) error {
	call := "pow(x, y)"
	if simple(x) && simple(y) {
		call = fmt.Sprintf("pow(%s, %s)", ev.text(x), ev.text(y))
	}
	return fmt.Errorf("operator %s is not supported (at character %d): for a power, use %s", op, at, call)
}

// simple reports whether e is an operand that binds tighter than any
// operator: a number, a name, a call or a parenthesized expression.
func simple(e ast.Expr) bool {
	switch e.(type) {
	case *ast.BasicLit, *ast.Ident, *ast.CallExpr, *ast.ParenExpr:
		return true
	}
	return false
}

func format(v constant.Value, digits int) string {
	if v.Kind() == constant.Int {
		return v.ExactString()
	}
	if r := constant.ToInt(v); r.Kind() == constant.Int {
		return r.ExactString()
	}
	var f big.Float
	switch x := constant.Val(v).(type) {
	case *big.Rat:
		f.SetPrec(256).SetRat(x)
	case *big.Float:
		f.SetPrec(256).Set(x)
	default:
		fv, _ := constant.Float64Val(v)
		f.SetFloat64(fv)
	}
	s := f.Text('g', digits)
	if strings.ContainsAny(s, ".") && !strings.ContainsAny(s, "e") {
		s = strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
	}
	return s
}

func (ev *evaluator) eval(e ast.Expr) (constant.Value, error) {
	if ev.ctx.Err() != nil {
		return nil, context.Cause(ev.ctx)
	}
	switch n := e.(type) {
	case *ast.BasicLit:
		if n.Kind != token.INT && n.Kind != token.FLOAT {
			return nil, fmt.Errorf("%s is not a number", n.Value)
		}
		v := constant.MakeFromLiteral(n.Value, n.Kind, 0)
		if v.Kind() == constant.Unknown {
			return nil, fmt.Errorf("the number %.40s is out of range", n.Value)
		}
		return bounded(v)
	case *ast.ParenExpr:
		return ev.eval(n.X)
	case *ast.Ident:
		switch n.Name {
		case "pi":
			ev.inexact = true
			return constant.MakeFloat64(math.Pi), nil
		case "e":
			ev.inexact = true
			return constant.MakeFloat64(math.E), nil
		}
		return nil, fmt.Errorf("unknown name %q (known constants: pi, e)", n.Name)
	case *ast.UnaryExpr:
		x, err := ev.eval(n.X)
		if err != nil {
			return nil, err
		}
		if n.Op != token.SUB && n.Op != token.ADD {
			return nil, fmt.Errorf("operator %s is not supported", n.Op)
		}
		return constant.UnaryOp(n.Op, x, 0), nil
	case *ast.BinaryExpr:
		// x ** y parses as x * (*y); ^ is Go's exclusive or.
		if y, ok := n.Y.(*ast.StarExpr); ok && n.Op == token.MUL && n.OpPos+1 == y.Star {
			return nil, ev.powerHint("**", n.X, y.X, n.OpPos)
		}
		if n.Op == token.XOR {
			return nil, ev.powerHint("^", n.X, n.Y, n.OpPos)
		}
		x, err := ev.eval(n.X)
		if err != nil {
			return nil, err
		}
		y, err := ev.eval(n.Y)
		if err != nil {
			return nil, err
		}
		return binary(n.Op, x, y)
	case *ast.CallExpr:
		return ev.call(n)
	}
	return nil, fmt.Errorf("%s (at character %d) is not supported: calculate takes numbers, + - * / %%, parentheses and functions such as pow(x, y)", clip(ev.text(e)), e.Pos())
}

// binary applies op to x and y, within MaxDigits: they are, so what op
// costs is bounded; its result is checked.
func binary(op token.Token, x, y constant.Value) (constant.Value, error) {
	switch op {
	case token.ADD, token.SUB, token.MUL:
		return bounded(constant.BinaryOp(x, op, y))
	case token.QUO:
		if constant.Sign(y) == 0 {
			return nil, fmt.Errorf("division by zero")
		}
		return bounded(constant.BinaryOp(constant.ToFloat(x), token.QUO, constant.ToFloat(y)))
	case token.REM:
		xi, yi := constant.ToInt(x), constant.ToInt(y)
		if xi.Kind() != constant.Int || yi.Kind() != constant.Int {
			return nil, fmt.Errorf("%% needs whole numbers")
		}
		if constant.Sign(yi) == 0 {
			return nil, fmt.Errorf("division by zero")
		}
		return constant.BinaryOp(xi, token.REM, yi), nil
	}
	return nil, fmt.Errorf("operator %s is not supported (use + - * / %% and pow(x, y))", op)
}

// power is exact for whole bases and whole exponents >= 0, within
// MaxDigits: a power that would be larger is refused before it is
// computed.
func power(x, y constant.Value) (constant.Value, error) {
	xi, yi := constant.ToInt(x), constant.ToInt(y)
	if xi.Kind() != constant.Int || yi.Kind() != constant.Int || constant.Sign(yi) < 0 {
		return floatFn(func(a ...float64) float64 { return math.Pow(a[0], a[1]) }, x, y), nil
	}
	base, exp := bigInt(xi), bigInt(yi)
	// |x|^n has more than (bits(|x|) - 1) * n bits: past the bound when
	// that is, while |x| <= 1 costs nothing whatever n.
	if b := int64(base.BitLen()) - 1; b > 0 && (!exp.IsInt64() || exp.Int64() > maxBits || b*exp.Int64() > maxBits) {
		n := new(big.Float).SetInt(exp)
		n.Mul(n, big.NewFloat(float64(b+1)*math.Log10(2)))
		return nil, fmt.Errorf("pow(…, %s) would have about %s digits; calculate works within %d digits", exp, n.Text('f', 0), MaxDigits)
	}
	return bounded(constant.Make(new(big.Int).Exp(base, exp, nil)))
}

// bigInt returns the integer v as a *big.Int.
func bigInt(v constant.Value) *big.Int {
	switch x := constant.Val(v).(type) {
	case int64:
		return big.NewInt(x)
	case *big.Int:
		return x
	}
	return new(big.Int)
}

func floatFn(f func(...float64) float64, args ...constant.Value) constant.Value {
	fs := make([]float64, len(args))
	for i, a := range args {
		fs[i], _ = constant.Float64Val(constant.ToFloat(a))
	}
	return constant.MakeFloat64(f(fs...))
}

var functions = map[string]struct {
	arity int
	fn    func(...float64) float64
}{
	"sqrt":  {1, func(a ...float64) float64 { return math.Sqrt(a[0]) }},
	"pow":   {2, func(a ...float64) float64 { return math.Pow(a[0], a[1]) }},
	"abs":   {1, func(a ...float64) float64 { return math.Abs(a[0]) }},
	"floor": {1, func(a ...float64) float64 { return math.Floor(a[0]) }},
	"ceil":  {1, func(a ...float64) float64 { return math.Ceil(a[0]) }},
	"round": {1, func(a ...float64) float64 { return math.Round(a[0]) }},
	"ln":    {1, func(a ...float64) float64 { return math.Log(a[0]) }},
	"log10": {1, func(a ...float64) float64 { return math.Log10(a[0]) }},
	"exp":   {1, func(a ...float64) float64 { return math.Exp(a[0]) }},
	"sin":   {1, func(a ...float64) float64 { return math.Sin(a[0]) }},
	"cos":   {1, func(a ...float64) float64 { return math.Cos(a[0]) }},
	"tan":   {1, func(a ...float64) float64 { return math.Tan(a[0]) }},
}

func (ev *evaluator) call(n *ast.CallExpr) (constant.Value, error) {
	id, ok := n.Fun.(*ast.Ident)
	if !ok {
		return nil, fmt.Errorf("unsupported call")
	}
	f, ok := functions[id.Name]
	if !ok {
		return nil, fmt.Errorf("unknown function %q", id.Name)
	}
	if len(n.Args) != f.arity {
		return nil, fmt.Errorf("%s takes %d argument(s), got %d", id.Name, f.arity, len(n.Args))
	}
	args := make([]constant.Value, len(n.Args))
	for i, a := range n.Args {
		v, err := ev.eval(a)
		if err != nil {
			return nil, err
		}
		args[i] = v
	}
	var v constant.Value
	if id.Name == "pow" {
		var err error
		if v, err = power(args[0], args[1]); err != nil {
			return nil, err
		}
	} else {
		v = floatFn(f.fn, args...)
	}
	if v.Kind() == constant.Float {
		ev.inexact = true
	}
	if v.Kind() == constant.Unknown {
		return nil, fmt.Errorf("%s is undefined for these arguments", id.Name)
	}
	return v, nil
}

// time tools

func loadZone(name string) (*time.Location, error) {
	if name == "" {
		return time.UTC, nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q: use an IANA name such as \"Europe/Paris\" or \"UTC\"", name)
	}
	return loc, nil
}

const timeLayouts = `RFC 3339 (2026-03-01T14:30:00Z), "2026-03-01 14:30" or "2026-03-01"`

func parseTime(s string, loc *time.Location) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("cannot read time %q: use %s", s, timeLayouts)
}

func describe(t time.Time) map[string]string {
	return map[string]string{
		"time":    t.Format(time.RFC3339),
		"weekday": t.Weekday().String(),
		"zone":    t.Format("MST -07:00"),
	}
}

func textOf(m map[string]string) string {
	return fmt.Sprintf("%s (%s, %s)", m["time"], m["weekday"], m["zone"])
}

func timeResult(d map[string]string) *tool.Result {
	return &tool.Result{Content: []tool.Content{tool.TextContent(textOf(d))}, StructuredContent: d}
}

type nowArgs struct {
	Timezone string `json:"timezone" description:"IANA time zone, e.g. Asia/Tokyo" jsonschema:"default=UTC"`
}

func now() tool.Tool {
	return typed("now", "Current time", "Returns the current date and time in a time zone (IANA name, default UTC), with the weekday.",
		false, func(_ context.Context, in nowArgs) (*tool.Result, error) {
			loc, err := loadZone(in.Timezone)
			if err != nil {
				return nil, err
			}
			return timeResult(describe(time.Now().In(loc))), nil
		})
}

type convertArgs struct {
	Time string `json:"time" description:"The time: RFC 3339 (2026-03-01T14:30:00Z), '2026-03-01 14:30' or '2026-03-01'"`
	From string `json:"from" description:"Time zone the time is in, when it has no offset" jsonschema:"default=UTC"`
	To   string `json:"to" description:"Time zone to convert to"`
}

func convertTime() tool.Tool {
	return typed("convert_time", "Convert time zone",
		"Converts a date and time from one time zone to another (IANA names), accounting for daylight saving time.",
		true, func(_ context.Context, in convertArgs) (*tool.Result, error) {
			from, err := loadZone(in.From)
			if err != nil {
				return nil, err
			}
			to, err := loadZone(in.To)
			if err != nil {
				return nil, err
			}
			t, err := parseTime(in.Time, from)
			if err != nil {
				return nil, err
			}
			return timeResult(describe(t.In(to))), nil
		})
}

type betweenArgs struct {
	Start    string `json:"start" description:"Start time"`
	End      string `json:"end" description:"End time"`
	Timezone string `json:"timezone" description:"Time zone for times without an offset" jsonschema:"default=UTC"`
}

func timeBetween() tool.Tool {
	return typed("time_between", "Time between",
		"Computes the time from one date/time to another: total days, hours and minutes, and calendar years, months and days.",
		true, func(_ context.Context, in betweenArgs) (*tool.Result, error) {
			loc, err := loadZone(in.Timezone)
			if err != nil {
				return nil, err
			}
			a, err := parseTime(in.Start, loc)
			if err != nil {
				return nil, err
			}
			b, err := parseTime(in.End, loc)
			if err != nil {
				return nil, err
			}
			sign := ""
			if b.Before(a) {
				a, b, sign = b, a, "-"
			}
			y, m, d := calendarDiff(a, b)
			dur := b.Sub(a)
			out := map[string]any{
				"days": sign + fmt.Sprintf("%.4g", dur.Hours()/24), "hours": sign + fmt.Sprintf("%.6g", dur.Hours()),
				"minutes": sign + fmt.Sprintf("%.8g", dur.Minutes()), "calendar": fmt.Sprintf("%s%d years, %d months, %d days", sign, y, m, d),
			}
			text := fmt.Sprintf("%s (%s days, %s hours)", out["calendar"], out["days"], out["hours"])
			return &tool.Result{Content: []tool.Content{tool.TextContent(text)}, StructuredContent: out}, nil
		})
}

// calendarDiff returns whole years, months and days from a to b (a <= b):
// the most whole months that fit, then the days left.
func calendarDiff(a, b time.Time) (years, months, days int) {
	b = b.In(a.Location())
	total := (b.Year()-a.Year())*12 + int(b.Month()) - int(a.Month())
	for total > 0 && a.AddDate(0, total, 0).After(b) {
		total--
	}
	anchor := a.AddDate(0, total, 0)
	return total / 12, total % 12, int(b.Sub(anchor).Hours() / 24)
}
