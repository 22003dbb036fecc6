package streams

// NoRetakeWait makes r retake the fresh iterators the stream refuses
// without waiting between them, so that a test of a stream that refuses
// every one ends at once.
func NoRetakeWait(r *Reader) { r.retake.Base = 0 }
