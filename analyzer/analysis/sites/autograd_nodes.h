/*
 * autograd_nodes.h - the autograd node a native stack runs: the innermost
 * frame that is a node's apply, as the backward pass's engine threads run
 * them (torch::autograd::generated::MmBackward0::apply: "MmBackward0").
 */
#ifndef PI_AUTOGRAD_NODES_H
#define PI_AUTOGRAD_NODES_H

#include <stddef.h>

#include "analysis/sites/call_sites.h"

/**
 * pi_autograd_node - the node of the innermost native frame of @site that
 * applies one: a generated node's class ("MmBackward0"), another node of
 * torch::autograd ("AccumulateGrad"), "CppNode<Fn> (custom C++ Function)"
 * or "PyNode (custom Python autograd Function)", into @out
 * Return: 1 when found, else 0.
 */
int pi_autograd_node(const struct pi_call_site *site, char *out, size_t size);

#endif
