// Questions asked of libraries rather than files: libibverbs' device list and
// NVML's GPU names. On a live node they are asked and the answers recorded
// into captures (/fabcheck/verbs.json, /fabcheck/nvml.json); an offline
// sysroot replays the recorded answers, or leaves the fields unknown.
#pragma once

#include <vector>

#include "fabcheck/model/inventory.h"
#include "inventory/reader.h"

namespace fabcheck::inventory {

inline constexpr std::string_view kVerbsMeta = "verbs.json";
inline constexpr std::string_view kNvmlMeta = "nvml.json";

// ibv_get_device_list() on a live node; the recorded result offline.
model::VerbsProbe ProbeVerbs(Reader& reader, bool query_live);

// Fills Gpu::name and Gpu::uuid from NVML (live) or the recorded answer.
// Returns the NVIDIA driver version when known.
std::string NameGpus(Reader& reader, bool query_live, std::vector<model::Gpu>* gpus);

}  // namespace fabcheck::inventory
