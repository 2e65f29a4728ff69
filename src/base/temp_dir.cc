#include "base/temp_dir.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>

namespace fabcheck {
namespace {

// Fixed storage: the handler may not allocate. A slot is free (0), being
// written (1) or holds a folder to remove (2).
constexpr int kSlots = 32;
struct Slot {
  std::atomic<int> state{0};
  char path[PATH_MAX];
};
Slot g_slots[kSlots];

// Deep enough for any tree fabcheck unpacks (captures refuse deeper entries);
// one directory buffer per level, static so the handler needs no stack.
constexpr int kMaxDepth = 256;
alignas(8) char g_dirents[kMaxDepth][2048];

struct LinuxDirent64 {
  uint64_t d_ino;
  int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[];
};

bool RemoveAt(int parent_fd, const char* name, int depth) {
  if (::unlinkat(parent_fd, name, 0) == 0 || errno == ENOENT) return true;
  if ((errno != EISDIR && errno != EPERM) || depth >= kMaxDepth) return false;
  int fd = ::openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return false;
  // Read from the start until a pass finds nothing left: removing entries
  // while reading a directory may make the kernel skip some.
  bool progress = true;
  while (progress) {
    progress = false;
    ::lseek(fd, 0, SEEK_SET);
    while (true) {
      long n = ::syscall(SYS_getdents64, fd, g_dirents[depth], sizeof(g_dirents[depth]));
      if (n <= 0) break;
      for (long offset = 0; offset < n;) {
        auto* entry = reinterpret_cast<LinuxDirent64*>(g_dirents[depth] + offset);
        offset += entry->d_reclen;
        const char* child = entry->d_name;
        if (std::strcmp(child, ".") == 0 || std::strcmp(child, "..") == 0) continue;
        if (RemoveAt(fd, child, depth + 1)) progress = true;
      }
    }
  }
  ::close(fd);
  return ::unlinkat(parent_fd, name, AT_REMOVEDIR) == 0 || errno == ENOENT;
}

std::atomic<bool> g_cleaning{false};

void RemoveRegistered() {
  for (Slot& slot : g_slots) {
    if (slot.state.load() == 2) RemoveTreeNoFollow(slot.path);
  }
}

void OnFatalSignal(int sig) {
  int saved_errno = errno;
  if (!g_cleaning.exchange(true)) RemoveRegistered();
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ::sigemptyset(&dfl.sa_mask);
  ::sigaction(sig, &dfl, nullptr);
  errno = saved_errno;
  ::raise(sig);  // delivered when the handler returns: the default action ends the process
}

void InstallHandlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : {SIGTERM, SIGHUP, SIGINT, SIGQUIT}) {
      struct sigaction current {};
      if (::sigaction(sig, nullptr, &current) != 0) continue;
      bool is_default = !(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_DFL;
      if (!is_default) continue;  // someone else handles it (or ignores it: nohup)
      struct sigaction action {};
      action.sa_handler = &OnFatalSignal;
      ::sigemptyset(&action.sa_mask);
      action.sa_flags = SA_RESETHAND;
      ::sigaction(sig, &action, nullptr);
    }
  });
}

int Register(const std::string& path) {
  if (path.size() >= PATH_MAX) return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = 0;
    if (g_slots[i].state.compare_exchange_strong(expected, 1)) {
      std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
      g_slots[i].state.store(2);
      return i;
    }
  }
  return -1;
}

}  // namespace

bool RemoveTreeNoFollow(const char* path) { return RemoveAt(AT_FDCWD, path, 0); }

Result<std::unique_ptr<TempDir>> TempDir::Create(const std::string& prefix, const std::string& parent) {
  const char* tmp = std::getenv("TMPDIR");
  std::string base = !parent.empty() ? parent : std::string(tmp && *tmp ? tmp : "/tmp");
  std::string pattern = base + "/" + prefix + "-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    return ErrnoError(errno, "cannot create a temporary folder " + pattern, "set TMPDIR to a writable folder");
  }
  InstallHandlers();
  int slot = Register(pattern);
  return std::unique_ptr<TempDir>(new TempDir(pattern, slot));
}

TempDir::~TempDir() {
  if (slot_ >= 0) g_slots[slot_].state.store(1);  // the handler must not remove it twice
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);  // never follows links
  if (slot_ >= 0) g_slots[slot_].state.store(0);
}

}  // namespace fabcheck
