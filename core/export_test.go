package core

// UniquifyAll is Uniquify without its fast path (the check that nothing needs renaming),
// for the test that the two agree.
var UniquifyAll = uniquifyAll
