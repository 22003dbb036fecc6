package wire

import "context"

// Rebind returns ctx carrying, for the call whose input is to, the call
// ctx carries for the input from, its Sink (if it has one) wrapped by
// wrap: for a client that passes the operation a copy of the input it was
// given (internal/intercept), so that the copy takes the path. It returns
// ctx itself when ctx carries no call for from.
func Rebind(ctx context.Context, from, to any, wrap func(Sink) Sink) context.Context {
	c, _ := ctx.Value(callKey{}).(*call)
	if c == nil || c.in != from {
		return ctx
	}
	s := c.sink
	if s != nil {
		s = wrap(s)
	}
	return With(ctx, to, s)
}

// SinkOf returns the Sink ctx carries for the call whose input is in; nil
// when none.
func SinkOf(ctx context.Context, in any) Sink {
	if c, _ := ctx.Value(callKey{}).(*call); c != nil && c.in == in {
		return c.sink
	}
	return nil
}
