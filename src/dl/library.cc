#include "dl/library.h"

#include <dlfcn.h>
#include <link.h>

namespace fabcheck::dl {

Result<std::shared_ptr<Library>> Library::Open(const std::vector<std::string>& names, const std::string& install_hint) {
  std::string tried;
  for (const auto& name : names) {
    void* handle = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* error = ::dlerror();
      if (!tried.empty()) tried += "; ";
      tried += error ? error : name;
      continue;
    }
    std::string path = name;
    struct link_map* map = nullptr;
    if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && *map->l_name) path = map->l_name;
    return std::shared_ptr<Library>(new Library(handle, path));
  }
  return UnavailableError("cannot load " + (names.empty() ? std::string("library") : names.front()) + " (" + tried +
                          ") (" + install_hint + ")");
}

Library::~Library() {
  // Never dlclose: CUDA and NCCL keep threads and atexit handlers that must
  // not outlive their code. The handle lives until the process ends.
}

Status Library::Resolve(const char* symbol, void** address) const {
  ::dlerror();
  *address = ::dlsym(handle_, symbol);
  if (*address == nullptr) {
    return UnavailableError(std::string("symbol ") + symbol + " not found in " + path_ +
                            " (the library is too old or not the expected one)");
  }
  return Status::Ok();
}

}  // namespace fabcheck::dl
