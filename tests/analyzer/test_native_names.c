/*
 * Unit: native functions' short names, on names as c++filt prints them for
 * symbols of libtorch_cpu and oneDNN. The expected names follow the rule by
 * hand: scopes kept, return type, template arguments, parameters, lambdas'
 * parameters, anonymous namespaces and cv-qualifiers dropped, outer scopes
 * dropped first past 80 characters.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "analysis/sites/native_names.h"

static void expect(const char *full, const char *wanted)
{
    char out[256];
    pi_native_short_name(full, out, sizeof(out));
    cr_expect_str_eq(out, wanted, "%s", full);
}

Test(native_names, a_lambda_inside_a_member_of_a_class_template)
{
    expect("dnnl::impl::cpu::x64::jit_uni_pooling_fwd_t<(dnnl::impl::cpu::x64::cpu_isa_t)560, "
           "(dnnl_data_type_t)3>::execute_forward(float const*, float*, char*, "
           "dnnl::impl::exec_ctx_t const&) const::{lambda(long, long, long, long)#1}::"
           "operator()(long, long, long, long) const",
           "dnnl::impl::cpu::x64::jit_uni_pooling_fwd_t<>::execute_forward()::{lambda#1}");
}

Test(native_names, return_type_and_anonymous_namespace_dropped)
{
    expect("void at::native::(anonymous namespace)::cpu_kernel_vec<at::native::(anonymous "
           "namespace)::add_kernel(at::TensorIteratorBase&, c10::Scalar const&)::{lambda()#1}::"
           "operator()() const::{lambda()#7}::operator()() const::{lambda(float, float)#1}>(at::"
           "TensorIteratorBase&, float, long)",
           "at::native::cpu_kernel_vec<>()");
    expect("at::Tensor& at::native::addmm_out(at::Tensor const&, at::Tensor const&, at::Tensor "
           "const&, c10::Scalar const&, c10::Scalar const&, at::Tensor&) [clone .cold]",
           "at::native::addmm_out()");
}

Test(native_names, outer_scopes_go_first_past_80_characters)
{
    char out[256];
    const char *full =
        "c10::function_ref<void (char**, long const*, long, long)>::callback_fn<at::native::AVX2::"
        "VectorizedLoop2d<at::native::AVX2::(anonymous namespace)::add_kernel(at::"
        "TensorIteratorBase&, c10::Scalar const&)::{lambda()#1}::operator()() const::{lambda()#7}"
        "::operator()() const::{lambda(float, float)#1}> >(long, char**, long const*, long, long)";
    expect(full, "c10::function_ref<>::callback_fn<>()");
    full = "torch::autograd::generated::details::some_rather_long_namespace_name::"
           "AnotherLongClassName<float>::yet_another_long_member_function_name(at::Tensor const&)";
    pi_native_short_name(full, out, sizeof(out));
    /* with its namespace it is 98 characters: the class and the function stay */
    cr_expect_str_eq(out, "\xe2\x80\xa6" "AnotherLongClassName<>::yet_another_long_member_function_name()");
    cr_expect_leq(strlen(out), 80 + strlen("\xe2\x80\xa6"));
}

Test(native_names, operators_and_plain_names)
{
    expect("std::basic_ostream<char, std::char_traits<char> >& std::operator<< "
           "<std::char_traits<char> >(std::basic_ostream<char, std::char_traits<char> >&, char "
           "const*)",
           "std::operator<< <>()");
    expect("std::function<void (long, long)>::operator()(long, long) const",
           "std::function<>::operator()()");
    expect("aten::addmm", "aten::addmm");
    expect("PyEval_EvalFrameDefault", "PyEval_EvalFrameDefault");
    expect("sgemm (OpenBLAS)", "sgemm (OpenBLAS)"); /* the analyzer's own label */
}

Test(native_names, a_long_name_without_scopes_is_cut)
{
    /* a Rust symbol the demangler leaves as it is (the tokenizers library's) */
    const char *rust = "_RNvXs1_NtNtNtCsevLNFiNqfJP_4core4iter8adapters7flattenINtB5_7FlatMapNtNtNtBb_"
                       "3str4iter11CharIndicesINtNtCs1C1lLj4PWSY_5alloc3vec3VecTTjjEbEE";
    char out[256];
    pi_native_short_name(rust, out, sizeof(out));
    cr_expect_eq(strncmp(out, rust, 79), 0, "%s", out);
    cr_expect_str_eq(out + 79, "\xe2\x80\xa6", "%s", out);
    expect("sgemm (OpenBLAS)", "sgemm (OpenBLAS)");
}
