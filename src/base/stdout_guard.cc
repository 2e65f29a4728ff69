#include "base/stdout_guard.h"

#include <iostream>
#include <mutex>
#include <streambuf>
#include <string>

#include "base/terminal_text.h"

namespace fabcheck {
namespace {

class NeutralizingBuffer : public std::streambuf {
 public:
  explicit NeutralizingBuffer(std::ostream& stream) : stream_(stream), next_(stream.rdbuf()) { stream_.rdbuf(this); }
  // A static: destroyed at exit before std::cout's final flush, so it hands
  // back the stream's own buffer with everything written.
  ~NeutralizingBuffer() override {
    std::lock_guard lock(mutex_);
    Drain(pending_.size());
    next_->pubsync();
    stream_.rdbuf(next_);
  }

 protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    std::lock_guard lock(mutex_);
    pending_ += traits_type::to_char_type(c);
    if (c == '\n') Drain(pending_.size());
    return c;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    std::lock_guard lock(mutex_);
    pending_.append(s, static_cast<size_t>(n));
    size_t newline = pending_.rfind('\n');
    if (newline != std::string::npos) {
      Drain(newline + 1);
    } else if (pending_.size() > kMaxPending) {
      Drain(Utf8Boundary());
    }
    return n;
  }
  int sync() override {
    std::lock_guard lock(mutex_);
    Drain(pending_.size());
    return next_->pubsync();
  }

 private:
  static constexpr size_t kMaxPending = 64 << 10;

  // The end of the pending bytes, moved back before a UTF-8 sequence that
  // has not all arrived (a newline never falls inside one).
  size_t Utf8Boundary() const {
    size_t end = pending_.size();
    for (size_t back = 1; back <= 3 && back <= pending_.size(); ++back) {
      unsigned char c = static_cast<unsigned char>(pending_[pending_.size() - back]);
      if ((c & 0xc0) == 0x80) continue;  // a continuation byte
      if (c >= 0xc0) end = pending_.size() - back;  // a lead byte: wait for its sequence
      break;
    }
    return end;
  }

  void Drain(size_t count) {
    if (count == 0) return;
    const std::string safe = NeutralizeControls(std::string_view(pending_).substr(0, count), Newlines::kKeep);
    next_->sputn(safe.data(), static_cast<std::streamsize>(safe.size()));
    pending_.erase(0, count);
  }

  std::ostream& stream_;
  std::streambuf* next_;
  std::mutex mutex_;  // std::cout may be written from several threads
  std::string pending_;  // guarded by mutex_
};

}  // namespace

void GuardStdout() { static NeutralizingBuffer guard(std::cout); }

}  // namespace fabcheck
