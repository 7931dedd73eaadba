// Shared definitions for the bulkad compute shaders. T is the element type: float, or double
// when compiled with -DF64. Every kernel uses a 1-D grid-stride loop (or a grid-stride loop over
// work items), so any size works with any number of workgroups.
#ifdef F64
#define T double
#else
#define T float
#endif

// llvmpipe (lavapipe) ends every loop once a shader invocation has run 65535 loop iterations in
// total (one limiter per invocation, shared by all loops). The host code therefore bounds the
// work per invocation: reductions take a segment length (seg) and matmul a k range and a tile
// range, and long problems are split into several segments or dispatches.
