#include "telemetry/compression.h"

#include <zlib.h>

#include <cctype>
#include <cstdlib>

#include "base/strings.h"

namespace fabcheck::telemetry {

Result<std::string> GzipCompress(std::string_view data, int level) {
  z_stream stream{};
  // windowBits 15 + 16: a gzip header and trailer instead of zlib's.
  if (deflateInit2(&stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return InternalError("gzip: deflateInit2 failed (level " + std::to_string(level) + ")");
  }
  std::string out;
  out.resize(deflateBound(&stream, static_cast<uLong>(data.size())));
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  // deflateBound is an upper bound for a single Z_FINISH call: one call suffices.
  int rc = deflate(&stream, Z_FINISH);
  size_t produced = stream.total_out;
  deflateEnd(&stream);
  if (rc != Z_STREAM_END) return InternalError("gzip: deflate did not finish (" + std::to_string(rc) + ")");
  out.resize(produced);
  return out;
}

bool AcceptsGzip(std::string_view accept_encoding) {
  for (const std::string& item : Split(accept_encoding, ',')) {
    std::string_view coding = Trim(item);
    std::string_view params;
    if (size_t semicolon = coding.find(';'); semicolon != std::string_view::npos) {
      params = coding.substr(semicolon + 1);
      coding = Trim(coding.substr(0, semicolon));
    }
    std::string lower(coding);  // content codings are case-insensitive (RFC 9110 8.4.1)
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower != "gzip" && lower != "x-gzip" && lower != "*") continue;
    bool refused = false;
    for (const std::string& param : Split(params, ';')) {
      std::string_view p = Trim(param);
      if (p.size() > 2 && (p[0] == 'q' || p[0] == 'Q') && p[1] == '=') {
        refused = std::strtod(std::string(p.substr(2)).c_str(), nullptr) <= 0.0;
      }
    }
    if (!refused) return true;
  }
  return false;
}

}  // namespace fabcheck::telemetry
