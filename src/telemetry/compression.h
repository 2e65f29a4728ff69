// gzip for the /metrics body, done by the exporter rather than by the HTTP
// library: once per collection (every scraper of that collection gets the
// same bytes) and at the fastest level. A 16-NIC scrape is ~160 KB of text;
// httplib's zlib at level 6 took a third of the exporter's CPU (perf). Level
// 1 with libdeflate (zlib when it is not installed) takes a fraction of that
// for a body of ~15 KB instead of ~14 KB.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace fabcheck::telemetry {

inline constexpr int kMetricsGzipLevel = 1;  // Z_BEST_SPEED

// A complete gzip member (RFC 1952) holding `data`.
Result<std::string> GzipCompress(std::string_view data, int level = kMetricsGzipLevel);

// Whether an Accept-Encoding header value accepts gzip: a "gzip" or "*"
// coding whose q is not 0 ("gzip;q=0" refuses it).
bool AcceptsGzip(std::string_view accept_encoding);

}  // namespace fabcheck::telemetry
