/*
 * Unit: the autograd node a native stack applies, on the symbols libtorch
 * exports for them (demangled as the analyzer demangles them: c++filt's
 * form of torch 2.x's mangled names), with the frames an engine thread
 * has between a kernel's launch and the node (cuBLAS, ATen's dispatcher).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "analysis/sites/autograd_nodes.h"

/* A call site of native frames only, innermost first, named by @symbols (NULL: unnamed). */
static int node_of(const char *const *symbols, size_t count, char *out, size_t size)
{
    struct pi_site_frame frames[8];
    memset(frames, 0, sizeof(frames));
    for (size_t i = 0; i < count; i++)
        frames[i].symbol = (char *)symbols[i];
    struct pi_call_site site = {frames, count, 0, NULL, NULL};
    return pi_autograd_node(&site, out, size);
}

#define VECTOR "(std::vector<at::Tensor, std::allocator<at::Tensor> >&&)"

Test(autograd_nodes, a_generated_node_below_aten_and_cublas)
{
    const char *stack[] = {"cublasLtMatmul", NULL, "at::cuda::blas::gemm<c10::BFloat16>(char, char, "
                           "long, long, long, c10::BFloat16, c10::BFloat16 const*, long)",
                           "at::_ops::mm::call(at::Tensor const&, at::Tensor const&)",
                           "torch::autograd::generated::MmBackward0::apply" VECTOR,
                           "torch::autograd::Node::operator()" VECTOR,
                           "torch::autograd::Engine::evaluate_function(std::shared_ptr<torch::"
                           "autograd::GraphTask>&, torch::autograd::Node*, torch::autograd::"
                           "InputBuffer&, std::shared_ptr<torch::autograd::ReadyQueue> const&)"};
    char node[128];
    cr_assert(node_of(stack, 7, node, sizeof(node)));
    cr_expect_str_eq(node, "MmBackward0");
}

Test(autograd_nodes, custom_functions_say_so)
{
    const char *python[] = {"torch::autograd::PyNode::apply" VECTOR};
    const char *cpp[] = {"torch::autograd::CppNode<my_ext::FusedGelu>::apply" VECTOR};
    char node[128];
    cr_assert(node_of(python, 1, node, sizeof(node)));
    cr_expect_str_eq(node, "PyNode (custom Python autograd Function)");
    cr_assert(node_of(cpp, 1, node, sizeof(node)));
    cr_expect_str_eq(node, "CppNode<my_ext::FusedGelu> (custom C++ autograd Function)");
}

Test(autograd_nodes, the_innermost_node_and_other_nodes_of_torch_autograd)
{
    /* a node that applies another (a PyNode whose Python calls back into autograd) */
    const char *nested[] = {"torch::autograd::AccumulateGrad::apply" VECTOR,
                            "torch::autograd::PyNode::apply" VECTOR};
    char node[128];
    cr_assert(node_of(nested, 2, node, sizeof(node)));
    cr_expect_str_eq(node, "AccumulateGrad");
}

Test(autograd_nodes, no_node_where_no_frame_applies_one)
{
    const char *none[] = {"at::native::mm_out_cuda(at::Tensor const&, at::Tensor const&, "
                          "at::Tensor&)",
                          "torch::autograd::Engine::thread_main(std::shared_ptr<torch::autograd::"
                          "GraphTask> const&)",
                          /* an apply inside a template's arguments is no node's own */
                          "torch::autograd::Wrapper<at::detail::apply(int)>::run()", NULL,
                          "at::native::apply(int)"};
    char node[128] = "";
    cr_expect_not(node_of(none, 5, node, sizeof(node)), "%s", node);
}
