/*
 * Unit: kernels' short names, on names PyTorch 2.x and cuBLAS kernels
 * carry on an H100 (the demangled names of tests/analyzer/fixtures/h100).
 * The expected names follow the rule by hand: the function without return
 * type, namespaces and template arguments, and the innermost functor, op
 * or function its template arguments name; rows that would read the same
 * get the next one back, then the leading numbers of the template
 * arguments, then a number.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "analysis/sites/kernel_names.h"

static void expect(const char *full, const char *wanted)
{
    char out[PI_KERNEL_SHORT_NAME];
    pi_kernel_short_name(full, out, sizeof(out));
    cr_expect_str_eq(out, wanted, "%s", full);
}

Test(kernel_names, elementwise_kernels_by_their_functor)
{
    expect("void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::"
           "native::CUDAFunctor_add<float> >(at::TensorIteratorBase&, at::native::CUDAFunctor_add<"
           "float> const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::"
           "CUDAFunctor_add<float> >(at::TensorIteratorBase&, at::native::CUDAFunctor_add<float> "
           "const&)::{lambda(int)#1})",
           "elementwise_kernel (CUDAFunctor_add)");
    expect("void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float, "
           "float, float, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 3ul> "
           ">(int, at::native::BinaryFunctor<float, float, float, at::native::binary_internal::"
           "MulFunctor<float> >, std::array<char*, 3ul>)",
           "vectorized_elementwise_kernel (MulFunctor)");
    expect("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
           "std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)",
           "vectorized_elementwise_kernel (FillFunctor)");
}

Test(kernel_names, a_lambda_is_named_by_the_function_it_is_in)
{
    expect("void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::"
           "native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() "
           "const::{lambda()#7}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, "
           "at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()"
           "() const::{lambda()#7}::operator()() const::{lambda(float)#1} const&)::{lambda(int)#1}>"
           "(int, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::"
           "TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() "
           "const::{lambda(float)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda"
           "(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()"
           "() const::{lambda(float)#1} const&)::{lambda(int)#1})",
           "elementwise_kernel (direct_copy_kernel_cuda)");
    expect("void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float, "
           "float, float, at::native::(anonymous namespace)::threshold_kernel_impl<float>(at::"
           "TensorIteratorBase&, float, float)::{lambda(float, float)#1}>, std::array<char*, 3ul> "
           ">(int, at::native::BinaryFunctor<float, float, float, at::native::(anonymous "
           "namespace)::threshold_kernel_impl<float>(at::TensorIteratorBase&, float, float)::{"
           "lambda(float, float)#1}>, std::array<char*, 3ul>)",
           "vectorized_elementwise_kernel (threshold_kernel_impl)");
}

Test(kernel_names, plain_kernels_keep_their_name)
{
    expect("void (anonymous namespace)::softmax_warp_forward<float, float, float, 4, true, false>"
           "(float*, float const*, int, int, int, bool const*, int, bool)",
           "softmax_warp_forward");
    expect("void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernelTemplate<float, "
           "float, 32u, 32u, 256u, false, true, false>(long, long, float const*, float const*, "
           "float const*, float const*, float*, float*)",
           "GammaBetaBackwardCUDAKernelTemplate");
    expect("fmha_cutlassF_f32_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<float,"
           " cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)",
           "fmha_cutlassF_f32_aligned_64x64_rf_sm80");
    expect("_Z4stepv", "_Z4stepv"); /* not demangled: as it is */
}

Test(kernel_names, gemm_kernels_by_layout_and_tile)
{
    expect("void cutlass::Kernel2<cutlass_80_simt_sgemm_128x32_8x5_nn_align1>(cutlass_80_simt_"
           "sgemm_128x32_8x5_nn_align1::Params)",
           "Kernel2 (cutlass_80_simt_sgemm_128x32_8x5_nn_align1)");
    expect("sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize256x128x8_stage3_warpsize4x2x1_ffma_"
           "aligna4_alignc4_execute_split_k_kernel__5x_cublas",
           "sm80_xmma_gemm (nn, 256x128x8, split k)");
    expect("sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x64x8_stage3_warpsize2x2x1_ffma_"
           "aligna4_alignc4_execute_kernel__5x_cublas",
           "sm80_xmma_gemm (tn, 128x64x8)");
}

Test(kernel_names, no_two_rows_read_the_same)
{
    const char *full[] = {
        "void at::native::reduce_kernel<128, 4, at::native::ReduceOp<float, at::native::func_"
        "wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::"
        "TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4, 4> >(at::native::"
        "ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, "
        "float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, "
        "4, 4>)",
        "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_"
        "wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::"
        "TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4, 4> >(at::native::"
        "ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, "
        "float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, "
        "4, 4>)",
        "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
        "namespace)::TensorListMetadata<1>, at::native::(anonymous namespace)::BinaryOpScalar"
        "Functor<float, 1, 1, 0>, std::multiplies<float>, float>(at::native::(anonymous "
        "namespace)::TensorListMetadata<1>, at::native::(anonymous namespace)::BinaryOpScalar"
        "Functor<float, 1, 1, 0>, std::multiplies<float>, float)",
        "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
        "namespace)::TensorListMetadata<3>, at::native::(anonymous namespace)::PointwiseOpScalar"
        "Functor<float, 3, 3, 0>, std::multiplies<float>, float>(at::native::(anonymous "
        "namespace)::TensorListMetadata<3>, at::native::(anonymous namespace)::PointwiseOpScalar"
        "Functor<float, 3, 3, 0>, std::multiplies<float>, float)",
        "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
        "namespace)::TensorListMetadata<2>, at::native::(anonymous namespace)::UnaryOpFunctor<"
        "float, 2, 1, 1>, at::native::Sqrt<float> >(at::native::(anonymous namespace)::TensorList"
        "Metadata<2>, at::native::(anonymous namespace)::UnaryOpFunctor<float, 2, 1, 1>, at::"
        "native::Sqrt<float>)",
        "void k<1>(int)", "void k<2>(int)", "void k<2>(long)"};
    const char *wanted[] = {"reduce_kernel<128, 4> (sum_functor)",
                            "reduce_kernel<512, 1> (sum_functor)",
                            "multi_tensor_apply_kernel (BinaryOpScalarFunctor, multiplies)",
                            "multi_tensor_apply_kernel (PointwiseOpScalarFunctor, multiplies)",
                            "multi_tensor_apply_kernel (Sqrt)",
                            "k<1>",
                            "k<2>",
                            "k<2> #2"};
    size_t n = sizeof(full) / sizeof(full[0]);
    char out[sizeof(full) / sizeof(full[0])][PI_KERNEL_SHORT_NAME];
    pi_kernel_short_names(full, n, out);
    for (size_t i = 0; i < n; i++)
        cr_expect_str_eq(out[i], wanted[i], "%zu", i);
}
