#include "coll/runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "base/log.h"
#include "coll/pattern.h"
#include "dl/cuda.h"

namespace fabcheck::coll {
namespace {

// One GPU this process drives.
struct Rank {
  int rank = 0;
  int device = 0;
  dl::NcclComm comm;
  dl::Stream stream;
  dl::DeviceBuffer send;
  dl::DeviceBuffer recv;
  dl::DeviceBuffer scalar;  // cross-rank sums of time and #wrong
};

class Session {
 public:
  Session(const dl::CudaApi& cuda, const dl::NcclApi& nccl, const CollOptions& options, int nranks)
      : cuda_(cuda), nccl_(nccl), options_(options), nranks_(nranks), elt_(dl::NcclTypeSize(options.dtype)) {}

  std::vector<Rank>& ranks() { return ranks_; }

  Status Allocate() {
    // As nccl-tests: both buffers hold the largest size, so every iteration
    // can run at its own offset (LaunchOne).
    uint64_t send_max = 0, recv_max = 0;
    for (uint64_t size : options_.sizes) max_bytes_ = std::max(max_bytes_, size);
    for (CollOp op : options_.ops) {
      for (uint64_t size : options_.sizes) {
        uint64_t s = 0, r = 0;
        MaxBufferBytes(op, size, elt_, nranks_, &s, &r);
        send_max = std::max(send_max, s);
        // In-place runs put the send data inside the receive buffer.
        recv_max = std::max({recv_max, r, s});
      }
    }
    max_bytes_ = std::max({max_bytes_, send_max, recv_max, uint64_t{256}});
    for (auto& r : ranks_) {
      ASSIGN_OR_RETURN(r.send, dl::DeviceBuffer::Allocate(cuda_, r.device, max_bytes_));
      ASSIGN_OR_RETURN(r.recv, dl::DeviceBuffer::Allocate(cuda_, r.device, max_bytes_));
      ASSIGN_OR_RETURN(r.scalar, dl::DeviceBuffer::Allocate(cuda_, r.device, 64));
    }
    return Status::Ok();
  }

  // Launches one collective on every local rank (grouped when several).
  // `iter` picks the buffer offset as nccl-tests' startColl does.
  Status Launch(CollOp op, const CollCounts& c, bool in_place, int iter) {
    if (ranks_.size() > 1) RETURN_IF_ERROR(dl::NcclCheck(nccl_, nccl_.ncclGroupStart(), "ncclGroupStart"));
    Status status;
    for (auto& r : ranks_) {
      status = LaunchOne(op, c, in_place, iter, r);
      if (!status.ok()) break;
    }
    if (ranks_.size() > 1) {
      Status end = dl::NcclCheck(nccl_, nccl_.ncclGroupEnd(), "ncclGroupEnd");
      if (status.ok()) status = end;
    }
    return status;
  }

  Status SyncAll() {
    for (auto& r : ranks_) {
      RETURN_IF_ERROR(dl::CudaCheck(cuda_, cuda_.cudaSetDevice(r.device), "cudaSetDevice"));
      RETURN_IF_ERROR(r.stream.Synchronize());
    }
    return Status::Ok();
  }

  // Sum of `value` over all ranks (every local rank contributes its own).
  Result<double> SumOverRanks(const std::vector<double>& local) {
    if (ranks_.size() == static_cast<size_t>(nranks_)) {
      double sum = 0;
      for (double v : local) sum += v;
      return sum;
    }
    // Process per GPU: one local rank; sum through NCCL itself.
    auto& r = ranks_.front();
    double value = local.front();
    RETURN_IF_ERROR(dl::CudaCheck(cuda_, cuda_.cudaSetDevice(r.device), "cudaSetDevice"));
    RETURN_IF_ERROR(dl::CudaCheck(
        cuda_, cuda_.cudaMemcpy(r.scalar.get(), &value, sizeof(value), dl::cudaMemcpyHostToDevice), "cudaMemcpy"));
    RETURN_IF_ERROR(dl::NcclCheck(nccl_,
                                  nccl_.ncclAllReduce(r.scalar.get(), r.scalar.get(), 1, dl::ncclFloat64, dl::ncclSum,
                                                      r.comm.get(), r.stream.get()),
                                  "ncclAllReduce (averaging the time over ranks)", r.comm.get()));
    RETURN_IF_ERROR(r.stream.Synchronize());
    RETURN_IF_ERROR(dl::CudaCheck(
        cuda_, cuda_.cudaMemcpy(&value, r.scalar.get(), sizeof(value), dl::cudaMemcpyDeviceToHost), "cudaMemcpy"));
    return value;
  }

  // One timed half of a row: time, bandwidth and (with --check) #wrong.
  Result<model::CollHalf> Measure(CollOp op, const CollCounts& c, bool in_place, PatternChecker* checker) {
    // nccl-tests: one untimed run, then `iters` launches, then one stream sync.
    RETURN_IF_ERROR(Launch(op, c, in_place, 0));
    RETURN_IF_ERROR(SyncAll());
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < options_.iters; ++i) RETURN_IF_ERROR(Launch(op, c, in_place, i));
    RETURN_IF_ERROR(SyncAll());
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / options_.iters;
    // Every local rank saw the same host time; average over all ranks.
    std::vector<double> local(ranks_.size(), seconds);
    ASSIGN_OR_RETURN(double sum, SumOverRanks(local));
    seconds = sum / nranks_;

    model::CollHalf half;
    Bandwidth bw = ComputeBandwidth(op, c.param_count, elt_, seconds, nranks_);
    half.time_us = seconds * 1e6;
    half.algbw_gbps = bw.algbw_gbps;
    half.busbw_gbps = bw.busbw_gbps;
    // In-place alltoall and sendrecv read and write the same buffer, so their
    // result is undefined; nccl-tests prints N/A there too.
    bool checkable = !(in_place && (op == CollOp::kAlltoAll || op == CollOp::kSendRecv));
    if (checker != nullptr && checkable) {
      ASSIGN_OR_RETURN(int64_t wrong, Check(op, c, in_place, checker));
      half.wrong = wrong;
    }
    return half;
  }

 private:
  Status LaunchOne(CollOp op, const CollCounts& c, bool in_place, int iter, Rank& r) {
    // nccl-tests moves both buffers by one operation's footprint per
    // iteration, cycling through the allocation, "to avoid cache effects"; a
    // different placement changes the figures by a few percent at large sizes.
    const uint64_t total = std::max(c.send_count, c.recv_count) * elt_;
    const uint64_t steps = total > 0 ? std::max<uint64_t>(max_bytes_ / total, 1) : 1;
    const uint64_t shift = total * (static_cast<uint64_t>(iter) % steps);
    auto* recv_base = static_cast<uint8_t*>(r.recv.get()) + shift;
    auto* send_base = static_cast<uint8_t*>(r.send.get()) + shift;
    const void* send = in_place ? recv_base + c.send_inplace_offset * r.rank * elt_ : send_base;
    void* recv = recv_base + (in_place ? c.recv_inplace_offset * r.rank * elt_ : 0);
    const size_t n = c.param_count;
    const auto type = options_.dtype;
    const auto redop = options_.redop;
    dl::cudaStream_t s = r.stream.get();
    dl::ncclComm_t comm = r.comm.get();
    RETURN_IF_ERROR(dl::CudaCheck(cuda_, cuda_.cudaSetDevice(r.device), "cudaSetDevice"));
    dl::ncclResult_t rc = dl::ncclSuccess;
    switch (op) {
      case CollOp::kAllReduce: rc = nccl_.ncclAllReduce(send, recv, n, type, redop, comm, s); break;
      case CollOp::kAllGather: rc = nccl_.ncclAllGather(send, recv, n, type, comm, s); break;
      case CollOp::kReduceScatter: rc = nccl_.ncclReduceScatter(send, recv, n, type, redop, comm, s); break;
      case CollOp::kBroadcast: rc = nccl_.ncclBroadcast(send, recv, n, type, options_.root, comm, s); break;
      case CollOp::kReduce: rc = nccl_.ncclReduce(send, recv, n, type, redop, options_.root, comm, s); break;
      case CollOp::kAlltoAll:
        // As nccl-tests: ncclAlltoAll where NCCL has it (2.28+), else grouped send/recv.
        if (nccl_.ncclAlltoAll != nullptr) {
          rc = nccl_.ncclAlltoAll(send, recv, n, type, comm, s);
        } else {
          rc = nccl_.ncclGroupStart();
          for (int peer = 0; peer < nranks_ && rc == dl::ncclSuccess; ++peer) {
            rc = nccl_.ncclSend(static_cast<const uint8_t*>(send) + peer * n * elt_, n, type, peer, comm, s);
            if (rc == dl::ncclSuccess) rc = nccl_.ncclRecv(static_cast<uint8_t*>(recv) + peer * n * elt_, n, type, peer, comm, s);
          }
          dl::ncclResult_t end = nccl_.ncclGroupEnd();
          if (rc == dl::ncclSuccess) rc = end;
        }
        break;
      case CollOp::kSendRecv: {
        int send_peer = (r.rank + 1) % nranks_;
        int recv_peer = (r.rank - 1 + nranks_) % nranks_;
        rc = nccl_.ncclGroupStart();
        if (rc == dl::ncclSuccess) rc = nccl_.ncclSend(send, n, type, send_peer, comm, s);
        if (rc == dl::ncclSuccess) rc = nccl_.ncclRecv(recv, n, type, recv_peer, comm, s);
        dl::ncclResult_t end = nccl_.ncclGroupEnd();
        if (rc == dl::ncclSuccess) rc = end;
        break;
      }
    }
    if (rc != dl::ncclSuccess) r.comm.MarkFailed();
    return dl::NcclCheck(nccl_, rc, fmt::format("{} of {} elements on rank {}", CollOpName(op), n, r.rank), comm);
  }

  Result<int64_t> Check(CollOp op, const CollCounts& c, bool in_place, PatternChecker* checker) {
    for (auto& r : ranks_) {
      auto* recv_base = static_cast<uint8_t*>(r.recv.get());
      // 0xff bytes: NaN or -1 or 255, never a pattern value, so stale data is caught.
      RETURN_IF_ERROR(dl::CudaCheck(cuda_, cuda_.cudaSetDevice(r.device), "cudaSetDevice"));
      // On the rank's own stream: the pattern fill below runs there too, and a
      // non-blocking stream does not wait for the legacy default stream.
      RETURN_IF_ERROR(dl::CudaCheck(cuda_, cuda_.cudaMemsetAsync(recv_base, 0xff, r.recv.size(), r.stream.get()),
                                    "cudaMemsetAsync"));
      void* send = in_place ? recv_base + c.send_inplace_offset * r.rank * elt_ : r.send.get();
      RETURN_IF_ERROR(checker->Fill(r.device, r.stream.get(), send, c.send_count, r.rank));
    }
    RETURN_IF_ERROR(Launch(op, c, in_place, 0));
    RETURN_IF_ERROR(SyncAll());
    std::vector<double> local;
    for (auto& r : ranks_) {
      const auto* out = static_cast<const uint8_t*>(r.recv.get()) + (in_place ? c.recv_inplace_offset * r.rank * elt_ : 0);
      auto segments = ExpectedSegments(op, c, r.rank, nranks_, options_.root);
      ASSIGN_OR_RETURN(int64_t wrong, checker->Verify(r.device, r.stream.get(), out, segments));
      local.push_back(static_cast<double>(wrong));
    }
    ASSIGN_OR_RETURN(double total, SumOverRanks(local));
    return static_cast<int64_t>(total);
  }

  const dl::CudaApi& cuda_;
  const dl::NcclApi& nccl_;
  const CollOptions& options_;
  int nranks_;
  size_t elt_;
  uint64_t max_bytes_ = 0;  // each of send and recv, per rank
  std::vector<Rank> ranks_;
};

Status InitSingleProcess(const dl::CudaApi& cuda, const dl::NcclApi& nccl, const std::vector<int>& devices,
                         Session* session) {
  std::vector<dl::ncclComm_t> comms(devices.size(), nullptr);
  RETURN_IF_ERROR(dl::NcclCheck(nccl, nccl.ncclCommInitAll(comms.data(), static_cast<int>(devices.size()), devices.data()),
                                fmt::format("ncclCommInitAll over {} GPUs", devices.size())));
  for (size_t i = 0; i < devices.size(); ++i) {
    Rank r;
    r.rank = static_cast<int>(i);
    r.device = devices[i];
    r.comm = dl::NcclComm(&nccl, comms[i]);
    ASSIGN_OR_RETURN(r.stream, dl::Stream::Create(cuda, r.device));
    session->ranks().push_back(std::move(r));
  }
  return Status::Ok();
}

Status InitRank(const dl::CudaApi& cuda, const dl::NcclApi& nccl, const RankSetup& setup, int device_count,
                Session* session) {
  Rank r;
  r.rank = setup.env.rank;
  if (setup.rendezvous == nullptr) return InvalidArgumentError("one process per GPU needs a rendezvous (--rendezvous)");
  // The id first: ncclGetUniqueId needs no device, and the TCP rendezvous
  // tells the local rank when the launcher does not.
  dl::ncclUniqueId id{};
  if (r.rank == 0) RETURN_IF_ERROR(dl::NcclCheck(nccl, nccl.ncclGetUniqueId(&id), "ncclGetUniqueId"));
  ASSIGN_OR_RETURN(Meeting meeting, setup.rendezvous->Exchange(r.rank, setup.host, id));
  int local_rank = setup.env.local_rank >= 0 ? setup.env.local_rank : meeting.local_rank;
  if (local_rank < 0) local_rank = device_count > 0 ? r.rank % device_count : 0;
  r.device = setup.device >= 0 ? setup.device : local_rank;
  // A launcher that binds one GPU per rank (Slurm --gpus-per-task=1, one GPU
  // per pod) leaves each rank a single visible device, whatever its local rank.
  if (setup.device < 0 && device_count == 1) r.device = 0;
  if (r.device >= device_count) {
    return InvalidArgumentError(fmt::format(
        "rank {} is local rank {} on {}, but CUDA sees {} GPU{} there (start at most one rank per GPU on each node, "
        "or check CUDA_VISIBLE_DEVICES)",
        r.rank, local_rank, setup.host, device_count, device_count == 1 ? "" : "s"));
  }
  RETURN_IF_ERROR(dl::CudaCheck(cuda, cuda.cudaSetDevice(r.device),
                                fmt::format("cudaSetDevice({}) for rank {} (local rank {})", r.device, r.rank,
                                            local_rank)));
  dl::ncclComm_t comm = nullptr;
  RETURN_IF_ERROR(dl::NcclCheck(nccl, nccl.ncclCommInitRank(&comm, setup.env.size, meeting.id, r.rank),
                                fmt::format("ncclCommInitRank (rank {} of {}, rendezvous {})", r.rank,
                                            setup.env.size, setup.rendezvous->Describe())));
  r.comm = dl::NcclComm(&nccl, comm);
  ASSIGN_OR_RETURN(r.stream, dl::Stream::Create(cuda, r.device));
  session->ranks().push_back(std::move(r));
  return Status::Ok();
}

}  // namespace

Status RunCollectives(const CollOptions& options, const RankSetup& setup, model::CollReport* report) {
  if (options.iters < 1 || options.warmup < 0) return InvalidArgumentError("--iters must be >= 1 and --warmup >= 0");
  if (options.sizes.empty() || options.ops.empty()) return InvalidArgumentError("no sizes or no collectives to run");
  ASSIGN_OR_RETURN(const dl::CudaApi* cuda, dl::LoadCuda());
  ASSIGN_OR_RETURN(const dl::NcclApi* nccl, dl::LoadNccl());
  report->nccl_version = dl::NcclVersionString(nccl->version);
  report->nccl_library = nccl->library->path();
  report->cuda_runtime_version = dl::CudaVersionString(cuda->runtime_version);

  int device_count = 0;
  RETURN_IF_ERROR(dl::CudaCheck(*cuda, cuda->cudaGetDeviceCount(&device_count), "cudaGetDeviceCount"));
  std::vector<int> devices = options.devices;
  if (setup.single_process && devices.empty()) {
    for (int d = 0; d < device_count; ++d) devices.push_back(d);
  }
  for (int d : devices) {
    if (d < 0 || d >= device_count) {
      return InvalidArgumentError(fmt::format("GPU {} does not exist: CUDA sees {} (check --gpus and CUDA_VISIBLE_DEVICES)", d, device_count));
    }
  }
  const int nranks = setup.single_process ? static_cast<int>(devices.size()) : setup.env.size;
  if (nranks < 1) return UnavailableError("no GPU visible to CUDA (check nvidia-smi and CUDA_VISIBLE_DEVICES)");
  if (options.root >= nranks) return InvalidArgumentError(fmt::format("--root {} is not a rank (0..{})", options.root, nranks - 1));

  Session session(*cuda, *nccl, options, nranks);
  report->mode = setup.single_process ? "single-process" : "process-per-gpu";
  report->nranks = nranks;
  if (setup.single_process) {
    RETURN_IF_ERROR(InitSingleProcess(*cuda, *nccl, devices, &session));
  } else {
    RETURN_IF_ERROR(InitRank(*cuda, *nccl, setup, device_count, &session));
  }
  for (const auto& r : session.ranks()) {
    model::CollRankInfo info;
    info.rank = r.rank;
    info.cuda_device = r.device;
    info.pci_bus_id = CudaPciBusId(*cuda, r.device).value_or("");
    info.name = dl::CudaDeviceName(*cuda, r.device);
    report->ranks.push_back(info);
  }
  RETURN_IF_ERROR(session.Allocate());

  const size_t elt = dl::NcclTypeSize(options.dtype);
  std::unique_ptr<PatternChecker> checker;
  if (options.check && CheckSupported(options.dtype, options.redop, nranks)) {
    checker = std::make_unique<PatternChecker>(*cuda, options.dtype, options.redop, nranks);
  }
  for (CollOp op : options.ops) {
    model::CollOpResult result;
    result.op = std::string(CollOpName(op));
    // nccl-tests warms up every size first (out-of-place), then measures.
    for (uint64_t size : options.sizes) {
      CollCounts c = ComputeCollCounts(op, size, elt, nranks);
      for (int i = 0; i < options.warmup; ++i) RETURN_IF_ERROR(session.Launch(op, c, false, i));
      RETURN_IF_ERROR(session.SyncAll());
    }
    for (uint64_t size : options.sizes) {
      CollCounts c = ComputeCollCounts(op, size, elt, nranks);
      model::CollRow row;
      row.size_bytes = PrintedSize(c, elt);
      row.count = c.param_count;
      row.type = std::string(NcclTypeName(options.dtype));
      row.redop = CollOpHasRedop(op) ? std::string(NcclRedOpName(options.redop)) : "none";
      row.root = CollOpHasRoot(op) ? options.root : -1;
      ASSIGN_OR_RETURN(row.out_of_place, session.Measure(op, c, false, checker.get()));
      ASSIGN_OR_RETURN(row.in_place, session.Measure(op, c, true, checker.get()));
      result.wrong += row.out_of_place.wrong.value_or(0) + row.in_place.wrong.value_or(0);
      LOG_DEBUG("coll", "{} {} B: {:.2f} / {:.2f} GB/s busbw", result.op, row.size_bytes, row.out_of_place.busbw_gbps,
                row.in_place.busbw_gbps);
      result.rows.push_back(std::move(row));
    }
    result.avg_busbw_gbps = AverageBusBw(result.rows);
    report->wrong += result.wrong;
    report->results.push_back(std::move(result));
  }
  std::vector<model::CollRow> all;
  for (const auto& r : report->results) all.insert(all.end(), r.rows.begin(), r.rows.end());
  report->average_bus_bandwidth_gbps = AverageBusBw(all);
  return Status::Ok();
}

}  // namespace fabcheck::coll
