/*
 * native_names.h - a native function's name as a sentence can hold it.
 * A demangled C++ name from oneDNN or PyTorch's CPU kernels runs to
 * several lines ("dnnl::impl::cpu::x64::jit_uni_pooling_fwd_t<(dnnl::
 * impl::cpu::x64::cpu_isa_t)560, ...>::execute_forward(float const*, ...)
 * const::{lambda(long, long, long, long)#1}::operator()(...) const"). The
 * short name keeps its scopes and drops what only the compiler needs:
 * the return type, template arguments ("<>"), parameter lists ("()"),
 * lambdas' parameters ("{lambda#1}" for the operator() of a lambda),
 * anonymous namespaces and cv-qualifiers; where that is still longer than
 * PI_NATIVE_SHORT_CHARS, the outer scopes go first
 * ("…x64::jit_uni_pooling_fwd_t<>::execute_forward()::{lambda#1}").
 * A name without scopes (a C function, a label such as "sgemm (OpenBLAS)")
 * or without brackets ("aten::addmm") is kept as it is.
 */
#ifndef PI_NATIVE_NAMES_H
#define PI_NATIVE_NAMES_H

#include <stddef.h>

#define PI_NATIVE_SHORT_CHARS 80

/* pi_native_short_name - the short name of the demangled name @full into @out (of @size) */
void pi_native_short_name(const char *full, char *out, size_t size);

#endif
