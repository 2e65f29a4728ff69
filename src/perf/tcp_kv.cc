// The KV-cache pattern over TCP (test kKv, `fabcheck kv`).
//
// One data connection per request in flight. On each, the client (prefill)
// runs requests one after another: per layer, its pages in batches of up to
// kBatchPages, each batch a 16-byte header, the destination page of every
// page in it (from the server's page table), then the pages' bytes gathered
// from the source pages (one sendmsg); then a layer notification. The server
// (decode) receives the bytes straight into the destination pages (one
// recvmsg scattering into every page of the batch and the next header, as a
// NIC would scatter RDMA writes) and answers each notification with an
// acknowledgement, which a second client thread per connection timestamps:
// layer time = its first page posted -> its acknowledgement; request time =
// the first page posted -> the last layer's acknowledgement. A slot starts
// its next request once the previous one is acknowledged, so --inflight N
// means exactly N requests moving at once.
#include <sys/socket.h>
#include <sys/uio.h>

#include <fmt/format.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "base/thread_group.h"
#include "base/units.h"
#include "perf/kv_pattern.h"
#include "perf/tcp_internal.h"
#include "perf/tcp_run.h"

namespace fabcheck::perf::tcp {

namespace {

enum Kind : uint32_t { kBatch = 1, kNotify = 2, kEnd = 3, kAck = 4, kEndAck = 5 };
constexpr size_t kHeader = 16;
// Pages per batch: one system call moves them, within the iovec limit (1024).
constexpr uint64_t kBatchPages = 64;

struct Header {
  uint32_t kind = 0, a = 0, b = 0, len = 0;
};

void Put32(char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>(v >> (24 - 8 * i));
}
uint32_t Get32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}
void Encode(char* out, const Header& h) {
  Put32(out, h.kind);
  Put32(out + 4, h.a);
  Put32(out + 8, h.b);
  Put32(out + 12, h.len);
}
Header Decode(const char* in) { return {Get32(in), Get32(in + 4), Get32(in + 8), Get32(in + 12)}; }
uint64_t Join64(uint32_t hi, uint32_t lo) { return (uint64_t{hi} << 32) | lo; }

double Us(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

// A wait without progress: stopped, or idle for longer than the timeout.
Status Idle(Clock::time_point last, const WaitContext& wait, const char* phase) {
  if (wait.stopped()) {
    return CancelledError(fmt::format("{} during {}: test stopped (another connection failed, or the server is "
                                      "shutting down)",
                                      wait.peer, phase));
  }
  if (Clock::now() - last > wait.idle_timeout) {
    return DeadlineExceededError(fmt::format("{} during {}: no progress for {} (peer stalled or gone?)", wait.peer,
                                             phase, FormatDuration(wait.idle_timeout.count() / 1000.0)));
  }
  return Status::Ok();
}

// Moves every byte of `iov` (sendmsg or recvmsg), across partial transfers
// and the sockets' 50 ms time slices.
Status TransferV(int fd, iovec* iov, int count, bool send, const WaitContext& wait, const char* phase) {
  auto last = Clock::now();
  while (count > 0) {
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = static_cast<size_t>(count);
    ssize_t n = send ? ::sendmsg(fd, &msg, MSG_NOSIGNAL) : ::recvmsg(fd, &msg, MSG_WAITALL);
    if (n > 0) {
      last = Clock::now();
      size_t left = static_cast<size_t>(n);
      while (count > 0 && left >= iov->iov_len) {
        left -= iov->iov_len;
        ++iov;
        --count;
      }
      if (count > 0) {
        iov->iov_base = static_cast<char*>(iov->iov_base) + left;
        iov->iov_len -= left;
      }
      continue;
    }
    if (n == 0 && !send) {
      return UnavailableError(fmt::format("{} during {}: data connection closed by the peer", wait.peer, phase));
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      RETURN_IF_ERROR(Idle(last, wait, phase));
      continue;
    }
    return ErrnoError(errno, fmt::format("{} during {}: {} on a data connection", wait.peer, phase,
                                         send ? "send" : "recv"));
  }
  return Status::Ok();
}

Status SendHeader(int fd, const Header& h, const WaitContext& wait, const char* phase) {
  char buf[kHeader];
  Encode(buf, h);
  return SendFull(fd, buf, sizeof buf, wait, phase);
}

// Shared state of the run on one side.
struct Run {
  explicit Run(const RunContext& c) : ctx(c) {}
  const RunContext& ctx;
  std::atomic<bool> abort{false};
  std::atomic<uint64_t> next_request{0};
  // The first failure is the cause; the other threads then fail because of
  // the stop (their sockets shut down), which says nothing new.
  void Fail(Status s) {
    {
      std::lock_guard lock(mu);
      if (first.ok()) first = std::move(s);
    }
    abort = true;
    for (auto& sock : ctx.socks) ::shutdown(sock.get(), SHUT_RDWR);
  }
  Status Outcome() {
    std::lock_guard lock(mu);
    return first;
  }
  std::mutex mu;
  Status first;
};

struct Pending {
  uint64_t request = 0;
  uint32_t layer = 0;
  Clock::time_point start, request_start;
};

// One request slot of the client: its sender and acknowledgement threads.
struct Slot {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Pending> pending;
  uint64_t completed = 0;  // requests whose last layer was acknowledged
  uint64_t acks = 0;       // layer acknowledgements so far (progress)
  bool acks_over = false;  // the acknowledgement thread has ended
  uint64_t pages_sent = 0;
  // Measured figures (requests numbered warmup and up).
  std::vector<double> request_us, layer_us;
  uint64_t requests = 0, notifications = 0;
  Clock::time_point first = Clock::time_point::max(), last = Clock::time_point::min();
};

void SenderThread(Run& run, Slot& slot, int conn, const std::vector<uint32_t>& table, const char* source,
                  uint64_t source_pages, uint64_t page) {
  const RunContext& ctx = run.ctx;
  const TestParams& p = ctx.params;
  PinThread(ctx.cpus);
  WaitContext wait{ctx.local.cancel, &run.abort, ctx.local.io_timeout, ctx.peer};
  const int fd = ctx.socks[static_cast<size_t>(conn)].get();
  const uint64_t layers = static_cast<uint64_t>(p.kv.layers), per_layer = p.kv.pages_per_layer;
  const uint64_t pool = table.size();
  const uint64_t total = p.iters != 0 ? p.warmup + p.iters : UINT64_MAX;
  const Clock::time_point stop =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(p.duration_s));
  uint64_t started = 0;
  Status s;
  auto fail = [&](Status st) { run.Fail(std::move(st)); };
  while (!wait.stopped()) {
    if (p.iters == 0 && Clock::now() >= stop) break;
    const uint64_t id = run.next_request.fetch_add(1);
    if (id >= total) break;
    uint64_t k = id * layers * per_layer;  // the request's first page, numbered across the run
    const Clock::time_point request_start = Clock::now();
    for (uint64_t layer = 0; layer < layers && s.ok(); ++layer) {
      {
        std::lock_guard lock(slot.mu);
        slot.pending.push_back({id, static_cast<uint32_t>(layer), layer == 0 ? request_start : Clock::now(),
                                request_start});
      }
      for (uint64_t i = 0; i < per_layer && s.ok();) {
        const uint64_t n = std::min(kBatchPages, per_layer - i);
        char header[kHeader];
        char dest[4 * kBatchPages];
        iovec iov[2 + kBatchPages];
        Encode(header, {kBatch, static_cast<uint32_t>(n), 0, static_cast<uint32_t>(page)});
        iov[0] = {header, kHeader};
        iov[1] = {dest, 4 * n};
        for (uint64_t b = 0; b < n; ++b, ++i, ++k) {
          Put32(dest + 4 * b, table[k % pool]);
          // Source pages are gathered from a shuffled spread too, as a paged cache's blocks.
          iov[2 + b] = {const_cast<char*>(source + KvSourcePage(k, source_pages) * page), page};
        }
        s = TransferV(fd, iov, static_cast<int>(2 + n), /*send=*/true, wait, "kv page write");
      }
      if (s.ok()) {
        s = SendHeader(fd, {kNotify, static_cast<uint32_t>(id), static_cast<uint32_t>(layer), 0}, wait,
                       "kv layer notification");
      }
    }
    if (!s.ok()) return fail(s);
    ++started;
    {
      std::lock_guard lock(slot.mu);
      slot.pages_sent += layers * per_layer;
    }
    // The next request starts once this one is acknowledged.
    std::unique_lock lock(slot.mu);
    auto last = Clock::now();
    uint64_t acks = slot.acks;
    while (slot.completed < started && !slot.acks_over && !wait.stopped()) {
      slot.cv.wait_for(lock, kIdleSlice);
      if (slot.acks != acks) {
        acks = slot.acks;
        last = Clock::now();
      } else if (Clock::now() - last > ctx.local.io_timeout) {
        lock.unlock();
        return fail(DeadlineExceededError(fmt::format(
            "{} during kv: request {} not acknowledged within {} (peer stalled or gone?)", ctx.peer, id,
            FormatDuration(ctx.local.io_timeout.count() / 1000.0))));
      }
    }
    if (slot.completed < started) {
      lock.unlock();
      return fail(CancelledError(fmt::format("{} during kv: test stopped", ctx.peer)));
    }
  }
  uint64_t pages = 0;
  {
    std::lock_guard lock(slot.mu);
    pages = slot.pages_sent;
  }
  s = SendHeader(fd, {kEnd, static_cast<uint32_t>(pages >> 32), static_cast<uint32_t>(pages), 0}, wait,
                 "kv end of run");
  if (!s.ok()) fail(s);
}

void AckThread(Run& run, Slot& slot, int conn) {
  const RunContext& ctx = run.ctx;
  const TestParams& p = ctx.params;
  WaitContext wait{ctx.local.cancel, &run.abort, ctx.local.io_timeout, ctx.peer};
  const int fd = ctx.socks[static_cast<size_t>(conn)].get();
  const uint32_t last_layer = static_cast<uint32_t>(p.kv.layers - 1);
  auto finish = [&](Status st) {
    {
      std::lock_guard lock(slot.mu);
      slot.acks_over = true;
      slot.cv.notify_all();
    }
    run.Fail(std::move(st));
  };
  while (true) {
    char buf[kHeader];
    if (Status s = RecvFull(fd, buf, sizeof buf, wait, "kv acknowledgement"); !s.ok()) return finish(s);
    const Clock::time_point now = Clock::now();
    const Header h = Decode(buf);
    std::unique_lock lock(slot.mu);
    if (h.kind == kEndAck) {
      const uint64_t got = Join64(h.a, h.b), sent = slot.pages_sent;
      slot.acks_over = true;
      slot.cv.notify_all();
      lock.unlock();
      if (got != sent) {
        run.Fail(DataLossError(
            fmt::format("{} during kv end of run: it received {} pages, this side sent {}", ctx.peer, got, sent)));
      }
      return;
    }
    if (h.kind != kAck || slot.pending.empty() || static_cast<uint32_t>(slot.pending.front().request) != h.a ||
        slot.pending.front().layer != h.b) {
      lock.unlock();
      return finish(DataLossError(fmt::format(
          "{} during kv: unexpected acknowledgement (kind {}, request {}, layer {}) (protocol mismatch?)", ctx.peer,
          h.kind, h.a, h.b)));
    }
    Pending done = slot.pending.front();
    slot.pending.pop_front();
    ++slot.acks;
    const bool measured = done.request >= p.warmup;
    if (measured) {
      slot.layer_us.push_back(Us(now - done.start));
      ++slot.notifications;
    }
    if (done.layer == last_layer) {
      ++slot.completed;
      if (measured) {
        slot.request_us.push_back(Us(now - done.request_start));
        ++slot.requests;
        slot.first = std::min(slot.first, done.request_start);
        slot.last = std::max(slot.last, now);
      }
      slot.cv.notify_all();
    }
  }
}

// The server side of one connection: pages land in their destination pages.
struct Receiver {
  uint64_t pages = 0, notifications = 0;
};

void ReceiverThread(Run& run, Receiver& r, int conn, char* pool, uint64_t pool_pages, uint64_t page) {
  const RunContext& ctx = run.ctx;
  PinThread(ctx.cpus);
  WaitContext wait{ctx.local.cancel, &run.abort, ctx.local.io_timeout, ctx.peer};
  const int fd = ctx.socks[static_cast<size_t>(conn)].get();
  char header[kHeader];
  auto fail = [&](Status s) { run.Fail(std::move(s)); };
  if (Status s = RecvFull(fd, header, kHeader, wait, "kv receive"); !s.ok()) return fail(s);
  while (true) {
    const Header h = Decode(header);
    if (h.kind == kBatch) {
      if (h.len != page || h.a < 1 || h.a > kBatchPages) {
        return fail(DataLossError(fmt::format(
            "{} during kv receive: a batch of {} pages of {} bytes; expected 1 to {} pages of {} bytes (protocol "
            "mismatch?)",
            ctx.peer, h.a, h.len, kBatchPages, page)));
      }
      const uint64_t n = h.a;
      char dest[4 * kBatchPages];
      if (Status s = RecvFull(fd, dest, 4 * n, wait, "kv receive"); !s.ok()) return fail(s);
      iovec iov[1 + kBatchPages];
      for (uint64_t b = 0; b < n; ++b) {
        const uint32_t d = Get32(dest + 4 * b);
        if (d >= pool_pages) {
          return fail(DataLossError(fmt::format(
              "{} during kv receive: destination page {} outside the page table of {} pages (protocol mismatch?)",
              ctx.peer, d, pool_pages)));
        }
        iov[b] = {pool + uint64_t{d} * page, page};
      }
      // Every page into its destination, the next header behind them: one call.
      iov[n] = {header, kHeader};
      if (Status s = TransferV(fd, iov, static_cast<int>(n + 1), /*send=*/false, wait, "kv page receive"); !s.ok()) {
        return fail(s);
      }
      r.pages += n;
      continue;
    }
    if (h.kind == kNotify) {
      ++r.notifications;
      if (Status s = SendHeader(fd, {kAck, h.a, h.b, 0}, wait, "kv acknowledgement"); !s.ok()) return fail(s);
    } else if (h.kind == kEnd) {
      if (Join64(h.a, h.b) != r.pages) {
        return fail(DataLossError(fmt::format("{} during kv end of run: it sent {} pages, {} arrived", ctx.peer,
                                              Join64(h.a, h.b), r.pages)));
      }
      Status s = SendHeader(fd, {kEndAck, static_cast<uint32_t>(r.pages >> 32), static_cast<uint32_t>(r.pages), 0},
                            wait, "kv end of run");
      if (!s.ok()) fail(s);
      return;
    } else {
      return fail(DataLossError(
          fmt::format("{} during kv receive: unknown message kind {} (protocol mismatch?)", ctx.peer, h.kind)));
    }
    if (Status s = RecvFull(fd, header, kHeader, wait, "kv receive"); !s.ok()) return fail(s);
  }
}

Result<SideMeasurement> RunServer(Run& run, uint64_t page, ControlChannel& control) {
  const TestParams& p = run.ctx.params;
  const uint64_t pool_pages = p.kv.pool_pages;
  AlignedBuffer pool(pool_pages * page);
  if (pool.data == nullptr) {
    return ResourceExhaustedError(fmt::format("cannot allocate the kv destination pool ({})",
                                              FormatSize(pool_pages * page)));
  }
  // The page table: destination pages in shuffled order, as a paged KV
  // cache's block table after some churn.
  std::vector<uint32_t> table = ShuffledPageTable(pool_pages);
  RETURN_IF_ERROR(control.Exchange("kv.page_table", {{"pages", table}}, run.ctx.local.io_timeout).status());
  const size_t n = run.ctx.socks.size();
  std::vector<Receiver> receivers(n);
  {
    base::ThreadGroup threads(fmt::format("{} kv receivers", run.ctx.peer), ThreadBudget(run.ctx.local));
    Status started = threads.StartEach(n, [&](size_t c) {
      ReceiverThread(run, receivers[c], static_cast<int>(c), pool.data, pool_pages, page);
    });
    if (!started.ok()) run.Fail(started);  // stops the receivers that did start; the group joins them
  }
  RETURN_IF_ERROR(run.Outcome());
  SideMeasurement m;
  for (const auto& r : receivers) {
    m.rx_messages += r.pages;
    m.kv_notifications += r.notifications;
  }
  m.rx_bytes = m.rx_messages * page;
  return m;
}

Result<SideMeasurement> RunClientSide(Run& run, uint64_t page, ControlChannel& control) {
  const TestParams& p = run.ctx.params;
  ASSIGN_OR_RETURN(nlohmann::json reply,
                   control.Exchange("kv.page_table", nlohmann::json::object(), run.ctx.local.io_timeout));
  ASSIGN_OR_RETURN(std::vector<uint32_t> table, ParsePageTable(reply, p.kv.pool_pages, run.ctx.peer));
  const uint64_t source_pages = KvSourcePages(p);
  AlignedBuffer source(source_pages * page);
  if (source.data == nullptr) {
    return ResourceExhaustedError(fmt::format("cannot allocate the kv source pages ({})", FormatSize(source_pages * page)));
  }
  FillPattern(source.data, source.size, PatternSeed(0, 0));
  const size_t n = run.ctx.socks.size();
  std::vector<Slot> slots(n);
  {
    base::ThreadGroup threads(fmt::format("{} kv senders", run.ctx.peer), ThreadBudget(run.ctx.local));
    Status started = threads.StartEach(n, [&](size_t c) {
      AckThread(run, slots[c], static_cast<int>(c));
    });
    if (started.ok()) {
      started = threads.StartEach(n, [&](size_t c) {
        SenderThread(run, slots[c], static_cast<int>(c), table, source.data, source_pages, page);
      });
    }
    if (!started.ok()) run.Fail(started);  // stops what did start; the group joins it
  }
  RETURN_IF_ERROR(run.Outcome());
  if (run.ctx.local.cancelled()) return CancelledError(fmt::format("{} during kv: test stopped", run.ctx.peer));
  SideMeasurement m;
  Clock::time_point first = Clock::time_point::max(), last = Clock::time_point::min();
  for (auto& s : slots) {
    m.kv_requests += s.requests;
    m.kv_notifications += s.notifications;
    m.request_us.insert(m.request_us.end(), s.request_us.begin(), s.request_us.end());
    m.layer_us.insert(m.layer_us.end(), s.layer_us.begin(), s.layer_us.end());
    first = std::min(first, s.first);
    last = std::max(last, s.last);
  }
  if (m.kv_requests == 0) {
    return FailedPreconditionError(fmt::format(
        "kv: no request completed after the {} warmup request(s); give a longer --duration or more --requests",
        p.warmup));
  }
  m.iterations = m.kv_requests;
  m.tx_messages = m.kv_requests * static_cast<uint64_t>(p.kv.layers) * p.kv.pages_per_layer;
  m.tx_bytes = m.tx_messages * page;
  m.tx_elapsed_s = std::chrono::duration<double>(last - first).count();
  return m;
}

}  // namespace

uint64_t KvMemoryNeeded(const TestParams& p, Role role) {
  uint64_t page = p.sizes.empty() ? 0 : p.sizes[0];
  return role == Role::kServer ? p.kv.pool_pages * page : KvSourcePages(p) * page;
}

Result<SideMeasurement> RunKv(const RunContext& ctx, uint64_t page_bytes, ControlChannel& control) {
  if (ctx.cuda != nullptr) {
    return UnimplementedError("kv over tcp moves host memory; GPU memory (--mem cuda:N) needs --transport verbs");
  }
  Run run(ctx);
  return ctx.local.role == Role::kServer ? RunServer(run, page_bytes, control) : RunClientSide(run, page_bytes, control);
}

}  // namespace fabcheck::perf::tcp
