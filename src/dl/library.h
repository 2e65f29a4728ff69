// dl/: the ONLY place fabcheck calls dlopen.
//
// CUDA, NCCL and NVML are loaded at run time behind function tables, so one
// binary runs on GPU and CPU-only nodes. A missing library or symbol is a
// clear Unavailable status with an install hint, never a loader error.
//
// A function table (see NCCL's src/misc/ibvsymbols.cc for the model):
//
//   struct NvmlApi {
//     nvmlReturn_t (*nvmlInit_v2)();
//     ...
//   };
//   Result<const NvmlApi*> LoadNvml();   // loads once, caches the table
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"

namespace fabcheck::dl {

class Library {
 public:
  // Tries each name in order (e.g. {"libnccl.so.2", "libnccl.so"}); the
  // error lists every name tried and ends with `install_hint`.
  static Result<std::shared_ptr<Library>> Open(const std::vector<std::string>& names, const std::string& install_hint);
  ~Library();
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  // The file that was actually loaded (from dlinfo), for reports.
  const std::string& path() const { return path_; }

  // Resolves `symbol` into `*fn`; Unavailable naming the symbol and library when absent.
  template <typename Fn>
  Status Load(const char* symbol, Fn** fn) const {
    void* address = nullptr;
    RETURN_IF_ERROR(Resolve(symbol, &address));
    *fn = reinterpret_cast<Fn*>(address);
    return Status::Ok();
  }
  // Like Load, but leaves *fn null when the symbol is absent (for optional,
  // version-dependent entry points).
  template <typename Fn>
  void LoadOptional(const char* symbol, Fn** fn) const {
    void* address = nullptr;
    *fn = Resolve(symbol, &address).ok() ? reinterpret_cast<Fn*>(address) : nullptr;
  }

 private:
  Library(void* handle, std::string path) : handle_(handle), path_(std::move(path)) {}
  Status Resolve(const char* symbol, void** address) const;

  void* handle_ = nullptr;
  std::string path_;
};

}  // namespace fabcheck::dl
