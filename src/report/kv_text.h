// `fabcheck kv` for people: the model presets, a request's sizing (with what
// a link of a given rate allows), and a run's figures beside the L3 rung.
#pragma once

#include <string>
#include <vector>

#include "fabcheck/model/kv.h"

namespace fabcheck::report {

// One line per preset: name, attention, layers, KV heads x head_dim or latent, dtype, source.
std::string FormatKvModels(const std::vector<model::KvModel>& models);

// The sizing of one request, and at `link_gbps` (> 0) the best time per
// request, requests/s and prompt tokens/s at line rate.
std::string FormatKvSizing(const model::KvSizing& sizing, double link_gbps);

// A run: what both ends used, the sizing in short, the figures, the L3 figure
// and the ratio, the TTFT budget and the findings.
std::string FormatKvResult(const model::KvResult& result);

// Fan-in / fan-out (`kv run --agents`): one line per transfer, then the hub's
// aggregate beside the aggregate L3 and the findings.
std::string FormatKvFan(const model::KvFanResult& result);

}  // namespace fabcheck::report
