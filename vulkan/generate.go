package vulkan

// The SPIR-V next to each GLSL source in shaders/ is committed, so building needs no shader
// compiler. After editing a shader, run `go generate ./vulkan` (needs glslc from the shaderc
// project, Debian package glslc); `spirv-val` (spirv-tools) checks the output.

//go:generate glslc --target-env=vulkan1.0 -O -o shaders/unary_f32.spv shaders/unary.comp
//go:generate glslc --target-env=vulkan1.0 -O -DF64 -o shaders/unary_f64.spv shaders/unary.comp
//go:generate glslc --target-env=vulkan1.0 -O -DEXACT -o shaders/unary_f32x.spv shaders/unary.comp
//go:generate glslc --target-env=vulkan1.0 -O -o shaders/binary_f32.spv shaders/binary.comp
//go:generate glslc --target-env=vulkan1.0 -O -DF64 -o shaders/binary_f64.spv shaders/binary.comp
//go:generate glslc --target-env=vulkan1.0 -O -DEXACT -o shaders/binary_f32x.spv shaders/binary.comp
//go:generate glslc --target-env=vulkan1.0 -O -o shaders/sum_thread_f32.spv shaders/sum_thread.comp
//go:generate glslc --target-env=vulkan1.0 -O -DF64 -o shaders/sum_thread_f64.spv shaders/sum_thread.comp
//go:generate glslc --target-env=vulkan1.0 -O -o shaders/sum_group_f32.spv shaders/sum_group.comp
//go:generate glslc --target-env=vulkan1.0 -O -DF64 -o shaders/sum_group_f64.spv shaders/sum_group.comp
//go:generate glslc --target-env=vulkan1.0 -O -o shaders/argmax_thread_f32.spv shaders/argmax_thread.comp
//go:generate glslc --target-env=vulkan1.0 -O -DF64 -o shaders/argmax_thread_f64.spv shaders/argmax_thread.comp
//go:generate glslc --target-env=vulkan1.0 -O -o shaders/argmax_group_f32.spv shaders/argmax_group.comp
//go:generate glslc --target-env=vulkan1.0 -O -DF64 -o shaders/argmax_group_f64.spv shaders/argmax_group.comp
//go:generate glslc --target-env=vulkan1.0 -O -o shaders/matmul_f32.spv shaders/matmul.comp
//go:generate glslc --target-env=vulkan1.0 -O -DF64 -o shaders/matmul_f64.spv shaders/matmul.comp
//go:generate glslc --target-env=vulkan1.0 -O -o shaders/matmul_simple_f32.spv shaders/matmul_simple.comp
//go:generate glslc --target-env=vulkan1.0 -O -DF64 -o shaders/matmul_simple_f64.spv shaders/matmul_simple.comp
//go:generate glslc --target-env=vulkan1.0 -O -o shaders/gather.spv shaders/gather.comp
//go:generate glslc --target-env=vulkan1.0 -O -o shaders/replicate.spv shaders/replicate.comp
//go:generate glslc --target-env=vulkan1.0 -O -DATOMIC_FLOAT -o shaders/scatter_atomic_f32.spv shaders/scatter.comp
//go:generate glslc --target-env=vulkan1.0 -O -o shaders/scatter_cas_f32.spv shaders/scatter.comp
//go:generate glslc --target-env=vulkan1.0 -O -DF64 -o shaders/scatter_cas_f64.spv shaders/scatter.comp
