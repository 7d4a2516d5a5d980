/// @file
/// @brief nvtxpp-capture's CUDA graph node source (in-process, part of libnvtxpp_inject.so):
/// CUPTI's resource callbacks for graph nodes written as gpu_graph_node records, so the reader
/// can put each replayed node's GPU work under the NVTX ranges that were open on the thread that
/// created the node (tools/capture/model/graph_ranges.hpp).
///
/// Nothing here runs when a graph is launched: the callbacks fire when nodes are created (stream
/// capture, the graph API), cloned (instantiation, cudaGraphClone, child graphs) or updated
/// (cudaGraphExecUpdate). Each writes one 56-byte record with one writev.
#pragma once

#include <cupti.h>

namespace nvtxpp::capture::graph_nodes {

/// @brief The resource callbacks this source handles (cupti.cpp enables them on its one
/// subscriber and forwards them to on_resource).
inline constexpr CUpti_CallbackId callbacks[] = {
    CUPTI_CBID_RESOURCE_GRAPHNODE_CREATE_STARTING, CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED,
    CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED, CUPTI_CBID_RESOURCE_GRAPH_NODE_UPDATED};

/// @brief The driver API callbacks this source handles: the calls that add a child-graph node
/// (their enter and exit bracket the copy CUDA makes of the child graph).
inline constexpr CUpti_CallbackId driver_callbacks[] = {
    CUPTI_DRIVER_TRACE_CBID_cuGraphAddChildGraphNode, CUPTI_DRIVER_TRACE_CBID_cuGraphAddNode,
    CUPTI_DRIVER_TRACE_CBID_cuGraphAddNode_v2};

/// @brief Resolves what the source needs from CUPTI (`cupti`, a dlopen handle): cuptiGetGraphId
/// and cuptiGetGraphNodeId. It calls nothing else: no CUDA call from inside CUDA's callbacks.
/// @return false when this CUPTI lacks them (graph nodes are then not recorded)
bool start(void* cupti) noexcept;

/// @brief Handles one resource callback of `callbacks` (`data`: CUPTI's CUpti_ResourceData).
void on_resource(CUpti_CallbackId cbid, void const* data) noexcept;

/// @brief Handles one driver API callback of `driver_callbacks` (`data`: CUpti_CallbackData).
void on_driver_api(CUpti_CallbackId cbid, void const* data) noexcept;

}  // namespace nvtxpp::capture::graph_nodes
