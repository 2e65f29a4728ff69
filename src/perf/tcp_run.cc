#include "perf/tcp_run.h"

#include <sys/socket.h>

#include <fmt/format.h>

#include <algorithm>
#include <condition_variable>
#include <latch>
#include <mutex>
#include <thread>

#include "base/json_text.h"
#include "base/thread_group.h"
#include "dl/cuda.h"
#include "perf/latency_samples.h"
#include "perf/tcp_internal.h"
#include "perf/tcp_transport.h"

namespace fabcheck::perf::tcp {

namespace {

// The peer's "error" as text: a peer that sends another type is reported,
// never a type_error thrown out of the run.
std::string PeerError(const nlohmann::json& j) {
  auto it = j.find("error");
  if (it == j.end()) return "(no reason given)";
  const auto& e = *it;
  return e.is_string() ? e.get<std::string>() : "(malformed error: " + ToJsonText(e) + ")";
}

constexpr uint64_t kUnknown = UINT64_MAX;
constexpr const char* kStopped = "test stopped (another stream failed, the server is shutting down, or the test ran "
                                 "past the server's --max-duration)";

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// A thread's message buffer: plain host memory, or pinned host memory staged
// to and from a GPU buffer (--mem cuda:N over TCP).
class Stage {
 public:
  Status Init(const RunContext& ctx, size_t message, size_t host_len) {
    if (ctx.cuda == nullptr) {
      plain_ = std::make_unique<AlignedBuffer>(host_len);
      if (plain_->data == nullptr) return ResourceExhaustedError(fmt::format("cannot allocate {} bytes", host_len));
      host_ = plain_->data;
      return Status::Ok();
    }
    cuda_ = ctx.cuda;
    int device = ctx.local.spec->mem.cuda_device;
    RETURN_IF_ERROR(dl::CudaCheck(*cuda_, cuda_->cudaSetDevice(device), "cudaSetDevice"));
    ASSIGN_OR_RETURN(pinned_, dl::HostBuffer::Allocate(*cuda_, host_len));
    ASSIGN_OR_RETURN(device_, dl::DeviceBuffer::Allocate(*cuda_, device, message));
    host_ = static_cast<char*>(pinned_.get());
    return Status::Ok();
  }
  char* host() const { return host_; }
  bool staged() const { return cuda_ != nullptr; }
  Status ToDevice(size_t len) {
    return dl::CudaCheck(*cuda_, cuda_->cudaMemcpy(device_.get(), host_, len, dl::cudaMemcpyHostToDevice),
                         "cudaMemcpy host->device");
  }
  Status FromDevice(size_t len) {
    return dl::CudaCheck(*cuda_, cuda_->cudaMemcpy(host_, device_.get(), len, dl::cudaMemcpyDeviceToHost),
                         "cudaMemcpy device->host");
  }

 private:
  std::unique_ptr<AlignedBuffer> plain_;
  const dl::CudaApi* cuda_ = nullptr;
  dl::HostBuffer pinned_;
  dl::DeviceBuffer device_;
  char* host_ = nullptr;
};

struct Direction {
  uint64_t messages = 0;  // measured messages
  uint64_t bytes_total = 0;  // warmup included (what the receiver must read)
  Clock::time_point start{}, end{};
  uint64_t validate_errors = 0;
  std::string detail;
  Status status;
};

// Shared state of one size.
struct SizeState {
  explicit SizeState(int n) : rx_target(static_cast<size_t>(n)), latch(n + 1) {}
  std::atomic<bool> abort{false};
  std::vector<std::atomic<uint64_t>> rx_target;
  std::latch latch;
  std::mutex mu;
  std::condition_variable cv;
  int senders_done = 0;
  Clock::time_point t0{};
  std::unique_ptr<PeakMeter> tx_meter, rx_meter;
};

void Fail(SizeState& st, Direction& d, Status s) {
  d.status = std::move(s);
  st.abort = true;
}

void SenderThread(const RunContext& ctx, SizeState& st, int conn, int stream, uint64_t size, Direction& d) {
  PinThread(ctx.cpus);
  const TestParams& p = ctx.params;
  WaitContext wait{ctx.local.cancel, &st.abort, ctx.local.io_timeout, ctx.peer};
  Stage stage;
  Status init = stage.Init(ctx, size, size);
  if (init.ok() && !p.validate) FillPattern(stage.host(), size, PatternSeed(stream, 0));
  auto signal_sent = [&] {
    std::lock_guard lock(st.mu);
    ++st.senders_done;
    st.cv.notify_all();
  };
  st.latch.arrive_and_wait();
  if (!init.ok()) {
    Fail(st, d, init);
    signal_sent();
    return;
  }
  int fd = ctx.socks[static_cast<size_t>(conn)].get();
  uint64_t index = 0;
  auto send_one = [&]() -> Status {
    if (p.validate) FillPattern(stage.host(), size, PatternSeed(stream, index));
    if (stage.staged()) {
      if (p.validate) RETURN_IF_ERROR(stage.ToDevice(size));
      RETURN_IF_ERROR(stage.FromDevice(size));
    }
    ++index;
    return SendFull(fd, stage.host(), size, wait, "bw send");
  };
  Status s;
  for (uint64_t i = 0; i < p.warmup && s.ok(); ++i) s = send_one();
  Clock::time_point now = Clock::now();
  d.start = now;
  Clock::time_point stop = now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(p.duration_s));
  while (s.ok()) {
    if (p.iters != 0 ? d.messages >= p.iters : now >= stop) break;
    // A busy socket never idles, so look at the stop flags now and then.
    if ((d.messages & 255) == 255 && wait.stopped()) {
      s = CancelledError(fmt::format("{} during bw send: {}", ctx.peer, kStopped));
      break;
    }
    s = send_one();
    now = Clock::now();
    if (s.ok()) {
      ++d.messages;
      st.tx_meter->Add(now, size);
    }
  }
  d.bytes_total = index * size;
  if (!s.ok()) {
    Fail(st, d, s);
    signal_sent();
    return;
  }
  signal_sent();
  char ack = 0;
  s = RecvFull(fd, &ack, 1, wait, "bw end-of-size acknowledgement");
  d.end = Clock::now();
  if (!s.ok()) Fail(st, d, s);
}

void ReceiverThread(const RunContext& ctx, SizeState& st, int conn, int stream, uint64_t size, Direction& d) {
  PinThread(ctx.cpus);
  const TestParams& p = ctx.params;
  WaitContext wait{ctx.local.cancel, &st.abort, ctx.local.io_timeout, ctx.peer};
  // Validation and staging look at whole messages; otherwise read big chunks.
  bool per_message = p.validate || ctx.cuda != nullptr;
  size_t cap = per_message ? size : std::max<uint64_t>(size, kRecvChunk);
  Stage stage;
  Status init = stage.Init(ctx, size, cap);
  st.latch.arrive_and_wait();
  if (!init.ok()) return Fail(st, d, init);
  int fd = ctx.socks[static_cast<size_t>(conn)].get();
  uint64_t warm_bytes = p.warmup * size;
  uint64_t got = 0, off = 0, index = 0, loops = 0;
  auto last = Clock::now();
  bool started = warm_bytes == 0;
  if (started) d.start = last;
  while (true) {
    uint64_t target = st.rx_target[static_cast<size_t>(conn)].load(std::memory_order_acquire);
    if (target != kUnknown && got >= target) break;
    if ((++loops & 255) == 0 && wait.stopped()) {
      return Fail(st, d, CancelledError(fmt::format("{} during bw receive: {}", ctx.peer, kStopped)));
    }
    size_t want = per_message ? size - off : cap;
    if (target != kUnknown) want = std::min<uint64_t>(want, target - got);
    ssize_t n = ::recv(fd, stage.host() + (per_message ? off : 0), want, 0);
    if (n > 0) {
      Clock::time_point now = Clock::now();
      last = now;
      if (!started && got + static_cast<uint64_t>(n) > warm_bytes) {
        started = true;
        d.start = now;
      }
      if (got >= warm_bytes) st.rx_meter->Add(now, static_cast<uint64_t>(n));
      got += static_cast<uint64_t>(n);
      if (per_message && (off += static_cast<uint64_t>(n)) == size) {
        off = 0;
        if (stage.staged()) {
          Status s = stage.ToDevice(size);
          if (s.ok() && p.validate) {
            std::fill_n(stage.host(), size, 0);
            s = stage.FromDevice(size);
          }
          if (!s.ok()) return Fail(st, d, s);
        }
        if (p.validate) {
          if (auto bad = CheckPattern(stage.host(), size, PatternSeed(stream, index)); bad && d.validate_errors++ == 0) {
            d.detail = fmt::format("stream {} message {} byte {}: data differs from the pattern", stream, index, *bad);
          }
        }
        ++index;
      }
      continue;
    }
    if (n == 0) {
      return Fail(st, d, UnavailableError(fmt::format("{} during bw receive: data connection closed by the peer after "
                                                      "{} bytes", ctx.peer, got)));
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
      if (wait.stopped()) return Fail(st, d, CancelledError(fmt::format("{} during bw receive: {}", ctx.peer, kStopped)));
      if (Clock::now() - last > ctx.local.io_timeout) {
        return Fail(st, d, DeadlineExceededError(fmt::format(
                               "{} during bw receive: no data for {} ms after {} bytes (peer stalled or gone?)",
                               ctx.peer, ctx.local.io_timeout.count(), got)));
      }
      continue;
    }
    return Fail(st, d, ErrnoError(errno, fmt::format("{} during bw receive: recv", ctx.peer)));
  }
  d.end = Clock::now();
  d.messages = got > warm_bytes ? (got - warm_bytes) / size : 0;
  d.bytes_total = got;
  char ack = 'A';
  Status s = SendFull(fd, &ack, 1, wait, "bw end-of-size acknowledgement");
  if (!s.ok()) Fail(st, d, s);
}

// First error among the threads, preferring a real cause over the
// "stopped" of threads that were told to give up because of it.
Status FirstError(const std::vector<Direction>& dirs) {
  const Status* first = nullptr;
  for (const auto& d : dirs) {
    if (d.status.ok()) continue;
    if (d.status.code() != StatusCode::kCancelled) return d.status;
    if (first == nullptr) first = &d.status;
  }
  return first != nullptr ? *first : Status::Ok();
}

}  // namespace

Result<SideMeasurement> RunBandwidth(const RunContext& ctx, uint64_t size, ControlChannel& control) {
  const TestParams& p = ctx.params;
  bool client = ctx.local.role == Role::kClient;
  int n = static_cast<int>(ctx.socks.size());
  // Which connections this side sends on: unidir: the client sends on all;
  // bidir: even connections carry client->server, odd server->client.
  auto sends_on = [&](int conn) { return p.bidir ? ((conn % 2 == 0) == client) : client; };
  auto stream_of = [&](int conn) { return p.bidir ? conn / 2 : conn; };
  int senders = 0;
  for (int c = 0; c < n; ++c) senders += sends_on(c) ? 1 : 0;

  SizeState st(n);
  for (int c = 0; c < n; ++c) {
    st.rx_target[static_cast<size_t>(c)] = p.iters != 0 ? (p.warmup + p.iters) * size : kUnknown;
  }
  st.t0 = Clock::now();
  st.tx_meter = std::make_unique<PeakMeter>(st.t0);
  st.rx_meter = std::make_unique<PeakMeter>(st.t0);
  std::vector<Direction> dirs(static_cast<size_t>(n));
  base::ThreadGroup threads(fmt::format("{} bw streams", ctx.peer), ThreadBudget(ctx.local));
  for (int c = 0; c < n; ++c) {
    Direction& d = dirs[static_cast<size_t>(c)];
    Status started = threads.Start([&ctx, &st, c, stream = stream_of(c), size, &d, sends = sends_on(c)] {
      (sends ? SenderThread : ReceiverThread)(ctx, st, c, stream, size, d);
    });
    if (!started.ok()) {
      // The threads that started wait for the others at the latch: release
      // them into a stopped run, then join them (ThreadGroup's destructor).
      st.abort = true;
      for (auto& s : ctx.socks) ::shutdown(s.get(), SHUT_RDWR);
      st.latch.count_down(n - c);
      st.latch.arrive_and_wait();
      threads.JoinAll();
      return started;
    }
  }
  st.latch.arrive_and_wait();
  // With --iters every receiver knows its target, so no thread needs the
  // exchange below: join first, and the exchange wait stays short however
  // long the run. With --duration, receivers learn their targets from it.
  bool joined = false;
  if (p.iters != 0) {
    threads.JoinAll();
    joined = true;
  } else {
    std::unique_lock lock(st.mu);
    st.cv.wait(lock, [&] { return st.senders_done == senders; });
  }
  // Tell the peer how many bytes each of our senders wrote, learn theirs.
  nlohmann::json sent = nlohmann::json::array();
  for (int c = 0; c < n; ++c) sent.push_back(sends_on(c) ? dirs[static_cast<size_t>(c)].bytes_total : 0);
  nlohmann::json mine = {{"sent", sent}};
  if (Status e = FirstError(dirs); !e.ok()) mine["error"] = e.message();
  auto wait_ms = ctx.local.io_timeout * 2 +
                 std::chrono::milliseconds(static_cast<int64_t>(p.duration_s * 1000) * 2 + 5000);
  auto theirs = control.Exchange(fmt::format("bw size {}", size), mine, wait_ms);
  Status outcome = theirs.status();
  if (outcome.ok() && theirs->contains("error")) {
    outcome = AbortedError(fmt::format("{} failed: {}", ctx.peer, PeerError(*theirs)));
  }
  if (outcome.ok()) {
    std::vector<uint64_t> their_sent;
    try {
      their_sent = theirs->value("sent", std::vector<uint64_t>{});
    } catch (const nlohmann::json::exception& e) {
      outcome = DataLossError(fmt::format("{} sent a malformed byte count: {}", ctx.peer, e.what()));
    }
    if (outcome.ok() && their_sent.size() != static_cast<size_t>(n)) {
      outcome = DataLossError(fmt::format("{} during bw size {}: byte counts for {} connections, expected {}",
                                          ctx.peer, size, their_sent.size(), n));
    } else if (outcome.ok()) {
      for (int c = 0; c < n; ++c) {
        if (!sends_on(c)) st.rx_target[static_cast<size_t>(c)].store(their_sent[static_cast<size_t>(c)]);
      }
    }
  }
  if (!outcome.ok()) {
    st.abort = true;
    for (auto& s : ctx.socks) ::shutdown(s.get(), SHUT_RDWR);
  }
  if (!joined) threads.JoinAll();
  Status local_error = FirstError(dirs);
  if (outcome.code() == StatusCode::kAborted) {
    // The peer said why it stopped; what we saw here is usually the consequence.
    if (local_error.ok() || local_error.code() == StatusCode::kCancelled) return outcome;
    return AbortedError(fmt::format("{} (here: {})", outcome.message(), local_error.message()));
  }
  if (!local_error.ok()) return local_error;
  if (!outcome.ok()) return outcome;

  SideMeasurement m;
  Clock::time_point tx_start = Clock::time_point::max(), tx_end{}, rx_start = Clock::time_point::max(), rx_end{};
  uint64_t measured_per_stream = UINT64_MAX;
  for (int c = 0; c < n; ++c) {
    const Direction& d = dirs[static_cast<size_t>(c)];
    if (sends_on(c)) {
      if (senders > 1) {
        m.stream_tx_bytes.push_back(d.messages * size);
        m.stream_tx_elapsed_s.push_back(d.messages > 0 ? Seconds(d.end - d.start) : 0);
      }
      m.tx_messages += d.messages;
      tx_start = std::min(tx_start, d.start);
      tx_end = std::max(tx_end, d.end);
      measured_per_stream = std::min(measured_per_stream, d.messages);
    } else {
      m.rx_messages += d.messages;
      rx_start = std::min(rx_start, d.start);
      rx_end = std::max(rx_end, d.end);
      m.validate_errors += d.validate_errors;
      if (m.validate_detail.empty()) m.validate_detail = d.detail;
    }
  }
  m.tx_bytes = m.tx_messages * size;
  m.rx_bytes = m.rx_messages * size;
  if (m.tx_messages > 0) m.tx_elapsed_s = Seconds(tx_end - tx_start);
  if (m.rx_messages > 0) m.rx_elapsed_s = Seconds(rx_end - rx_start);
  m.tx_peak_gbps = st.tx_meter->PeakGbps();
  m.rx_peak_gbps = st.rx_meter->PeakGbps();
  m.iterations = measured_per_stream == UINT64_MAX ? (p.iters != 0 ? p.iters : 0) : measured_per_stream;
  return m;
}

Result<SideMeasurement> RunLatency(const RunContext& ctx, uint64_t size, ControlChannel& control) {
  const TestParams& p = ctx.params;
  bool client = ctx.local.role == Role::kClient;
  int fd = ctx.socks.at(0).get();
  std::atomic<bool> abort{false};
  std::atomic<uint64_t> target{p.iters != 0 ? p.warmup + p.iters : kUnknown};
  SideMeasurement m;
  Status status;
  uint64_t done = 0;
  // The start of each measured ping: consecutive starts give one round trip.
  LatencySamples samples;
  Clock::time_point first_ping{}, last_ping{};
  uint64_t pings = 0;

  base::ThreadGroup worker(fmt::format("{} lat", ctx.peer), ThreadBudget(ctx.local));
  RETURN_IF_ERROR(worker.Start([&] {
    PinThread(ctx.cpus);
    WaitContext wait{ctx.local.cancel, &abort, ctx.local.io_timeout, ctx.peer};
    Stage stage;
    status = stage.Init(ctx, size, size);
    if (!status.ok()) return;
    char* buf = stage.host();
    auto check = [&](uint64_t index) -> Status {
      if (stage.staged()) {
        RETURN_IF_ERROR(stage.ToDevice(size));
        if (p.validate) std::fill_n(buf, size, 0);
        RETURN_IF_ERROR(stage.FromDevice(size));
      }
      if (p.validate) {
        if (auto bad = CheckPattern(buf, size, PatternSeed(0, index)); bad && m.validate_errors++ == 0) {
          m.validate_detail = fmt::format("message {} byte {}: data differs from the pattern ({} side)", index, *bad,
                                          RoleName(ctx.local.role));
        }
      }
      return Status::Ok();
    };
    if (client) {
      if (!p.validate) FillPattern(buf, size, PatternSeed(0, 0));
      samples.Reserve(p.iters != 0 ? p.iters : 1 << 20);
      Clock::time_point start{}, stop{};
      for (uint64_t i = 0; status.ok(); ++i) {
        Clock::time_point now = Clock::now();
        if (i == p.warmup) {
          start = now;
          stop = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(p.duration_s));
        }
        if (i >= p.warmup) {
          if (p.iters != 0 ? i >= p.warmup + p.iters : now >= stop) break;
          if (pings++ == 0) {
            first_ping = now;
          } else {
            samples.Add(std::chrono::duration<double, std::micro>(now - last_ping).count());
          }
          last_ping = now;
        }
        if ((i & 255) == 255 && wait.stopped()) {
          status = CancelledError(fmt::format("{} during lat: {}", ctx.peer, kStopped));
          break;
        }
        if (p.validate) FillPattern(buf, size, PatternSeed(0, i));
        if (stage.staged() && (status = stage.FromDevice(size)).ok() == false) break;
        status = SendFull(fd, buf, size, wait, "lat ping");
        if (status.ok()) status = RecvFull(fd, buf, size, wait, "lat pong");
        if (status.ok()) status = check(i);
        if (status.ok()) done = i + 1;
      }
    } else {
      // The echo side: receive a whole ping, answer it. With --duration the
      // count comes through the control connection, so an idle wait checks it.
      uint64_t off = 0;
      IdleSince idle;
      while (status.ok()) {
        if (off == 0 && done >= target.load(std::memory_order_acquire)) break;
        if ((done & 255) == 255 && off == 0 && wait.stopped()) {
          status = CancelledError(fmt::format("{} during lat: {}", ctx.peer, kStopped));
          break;
        }
        ssize_t n = ::recv(fd, buf + off, size - off, 0);
        if (n > 0) {
          idle.Progress();
          if ((off += static_cast<uint64_t>(n)) < size) continue;
          off = 0;
          status = check(done);
          if (status.ok()) status = SendFull(fd, buf, size, wait, "lat pong");
          if (status.ok()) ++done;
        } else if (n == 0) {
          status = UnavailableError(fmt::format("{} during lat: data connection closed by the peer", ctx.peer));
        } else if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
          if (wait.stopped()) status = CancelledError(fmt::format("{} during lat: {}", ctx.peer, kStopped));
          else if (Clock::now() - idle.Since() > ctx.local.io_timeout) {
            status = DeadlineExceededError(fmt::format("{} during lat: no ping for {} ms (peer stalled or gone?)",
                                                       ctx.peer, ctx.local.io_timeout.count()));
          }
        } else {
          status = ErrnoError(errno, fmt::format("{} during lat: recv", ctx.peer));
        }
      }
    }
    if (!status.ok()) abort = true;
  }));

  auto wait_ms = ctx.local.io_timeout * 2 +
                 std::chrono::milliseconds(static_cast<int64_t>(p.duration_s * 1000) * 2 + 5000);
  Result<nlohmann::json> theirs = nlohmann::json::object();
  if (client) {
    worker.JoinAll();
    nlohmann::json mine = {{"messages", done}};
    if (!status.ok()) mine["error"] = status.message();
    theirs = control.Exchange(fmt::format("lat size {}", size), mine, wait_ms);
    if (!status.ok()) return status;
  } else {
    if (p.iters != 0) worker.JoinAll();  // the count is known: the wait below stays short
    theirs = control.Exchange(fmt::format("lat size {}", size), nlohmann::json::object(), wait_ms);
    if (theirs.ok() && !theirs->contains("error")) {
      auto it = theirs->find("messages");
      target.store(it != theirs->end() && it->is_number_unsigned() ? it->get<uint64_t>() : 0);
    } else {
      abort = true;
    }
    if (!theirs.ok() || theirs->contains("error")) ::shutdown(fd, SHUT_RDWR);
    worker.JoinAll();
  }
  if (!theirs.ok()) return theirs.status();
  if (theirs->contains("error")) {
    return AbortedError(fmt::format("{} failed: {}", ctx.peer, PeerError(*theirs)));
  }
  if (!status.ok()) return status;
  m.iterations = done > p.warmup ? done - p.warmup : 0;
  m.tx_messages = m.iterations;
  m.tx_bytes = m.iterations * size;
  m.rtt_us = std::move(samples).Take();
  if (pings >= 2) m.tx_elapsed_s = Seconds(last_ping - first_ping);
  return m;
}

}  // namespace fabcheck::perf::tcp
