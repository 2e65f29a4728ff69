#include "app/json_errors.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <streambuf>

#include "base/exit_codes.h"
#include "base/log.h"

namespace fabcheck::app {
namespace {

// Forwards everything to `target`, counting bytes and optionally keeping a
// bounded copy (what an error document may need: a few lines).
class WatchingBuffer : public std::streambuf {
 public:
  WatchingBuffer(std::streambuf* target, bool keep) : target_(target), keep_(keep) {}

  size_t written() const { return written_; }
  const std::string& kept() const { return kept_; }

 protected:
  int overflow(int ch) override {
    if (ch == traits_type::eof()) return traits_type::not_eof(ch);
    char c = static_cast<char>(ch);
    return xsputn(&c, 1) == 1 ? ch : traits_type::eof();
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    written_ += static_cast<size_t>(n);
    if (keep_ && kept_.size() < kKeepLimit) kept_.append(s, std::min<size_t>(n, kKeepLimit - kept_.size()));
    return target_->sputn(s, n);
  }
  int sync() override { return target_->pubsync(); }

 private:
  static constexpr size_t kKeepLimit = 64 * 1024;
  std::streambuf* target_;
  bool keep_;
  size_t written_ = 0;
  std::string kept_;
};

}  // namespace

struct OutputWatch::Buffers {
  std::streambuf* cout_original = std::cout.rdbuf();
  std::streambuf* cerr_original = std::cerr.rdbuf();
  WatchingBuffer out{cout_original, /*keep=*/false};
  WatchingBuffer err{cerr_original, /*keep=*/true};
  log::Sink previous_sink;
  std::vector<std::string> logged_errors;  // LOG_ERROR lines (some commands report through the log)
};

OutputWatch::OutputWatch() : buffers_(std::make_unique<Buffers>()) {
  std::cout.rdbuf(&buffers_->out);
  std::cerr.rdbuf(&buffers_->err);
  Buffers* b = buffers_.get();
  b->previous_sink = log::SetSink([b](log::Level level, std::string_view subsystem, std::string_view message) {
    if (b->previous_sink) {
      b->previous_sink(level, subsystem, message);
    } else {
      std::string line = fmt::format("fabcheck: {} [{}] {}\n", log::LevelName(level), subsystem, message);
      std::fwrite(line.data(), 1, line.size(), stderr);
    }
    if (level == log::Level::kError && b->logged_errors.size() < 20) {
      b->logged_errors.push_back(fmt::format("fabcheck {}: {}", subsystem, message));
    }
  });
}

OutputWatch::~OutputWatch() {
  std::cout.flush();
  std::cerr.flush();
  log::SetSink(std::move(buffers_->previous_sink));
  std::cout.rdbuf(buffers_->cout_original);
  std::cerr.rdbuf(buffers_->cerr_original);
}

bool OutputWatch::WroteStdout() const { return buffers_->out.written() > 0; }

std::vector<std::string> OutputWatch::ErrorLines() const {
  std::vector<std::string> lines = buffers_->logged_errors;
  const std::string& text = buffers_->err.kept();
  size_t start = 0;
  while (start < text.size() && lines.size() < 20) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (line.rfind("fabcheck", 0) == 0) lines.push_back(std::move(line));
    start = end + 1;
  }
  return lines;
}

const char* ExitMeaning(int code) {
  switch (code) {
    case kExitOk: return "pass";
    case kExitWarnings: return "warnings";
    case kExitFailures: return "failed";
    case kExitError: return "could-not-run";
    case kExitUsage: return "usage";
  }
  return "unknown";
}

nlohmann::json ErrorDocument(const std::string& command, int exit_code, const std::vector<std::string>& errors) {
  nlohmann::json j;
  j["schema"] = kErrorSchema;
  j["command"] = command;
  j["exit_code"] = exit_code;
  j["outcome"] = ExitMeaning(exit_code);
  j["errors"] = errors;
  return j;
}

bool WantsJson(const std::vector<std::string>& argv) {
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == "--") break;  // what follows is an operand (a file named --json)
    if (a == "--json" || a == "--format=json") return true;
    if (a == "--format" && i + 1 < argv.size() && argv[i + 1] == "json") return true;
  }
  return false;
}

std::string CommandPath(const CLI::App& root) {
  std::string path;
  const CLI::App* app = &root;
  while (true) {
    auto subs = app->get_subcommands();
    if (subs.empty()) break;
    app = subs.front();
    path += (path.empty() ? "" : " ") + app->get_name();
  }
  return path;
}

}  // namespace fabcheck::app
