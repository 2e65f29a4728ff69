// Bounded input: size caps, long lines, endless streams, FIFOs, directories.
#include "base/input.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fcntl.h>

#include <chrono>
#include <thread>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace fabcheck {
namespace {

std::string TempFile(const std::string& content) {
  char name[] = "/tmp/fabcheck-input-XXXXXX";
  int fd = ::mkstemp(name);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(::write(fd, content.data(), content.size()), static_cast<ssize_t>(content.size()));
  ::close(fd);
  return name;
}

std::vector<std::string> Lines(const std::string& path, LineReader::Options options, bool* any_truncated = nullptr) {
  auto reader = LineReader::Open(path, options);
  EXPECT_TRUE(reader.ok()) << reader.status().ToString();
  std::vector<std::string> out;
  std::string_view line;
  while (reader->Next(&line)) {
    out.emplace_back(line);
    if (any_truncated && reader->truncated()) *any_truncated = true;
  }
  EXPECT_TRUE(reader->status().ok()) << reader->status().ToString();
  return out;
}

TEST(ReadFileBounded, ReadsAndCaps) {
  std::string path = TempFile("hello\nworld");
  auto text = ReadFileBounded(path, 100);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "hello\nworld");
  auto capped = ReadFileBounded(path, 5);
  ASSERT_FALSE(capped.ok());
  EXPECT_EQ(capped.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(capped.status().message().find(path), std::string::npos);
  ::unlink(path.c_str());
}

TEST(ReadFileBounded, MissingDirectoryAndEndlessInputs) {
  auto missing = ReadFileBounded("/nonexistent/fabcheck.log");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  auto dir = ReadFileBounded("/tmp");
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.status().message().find("directory"), std::string::npos);
  auto zero = ReadFileBounded("/dev/zero", 1 << 20);
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.status().code(), StatusCode::kResourceExhausted);
}

TEST(LineReader, SplitsLinesAcrossChunksAndDropsCr) {
  std::string text;
  for (int i = 0; i < 200000; ++i) text += "line " + std::to_string(i) + "\r\n";
  text += "last without newline";
  std::string path = TempFile(text);
  auto lines = Lines(path, {});
  ASSERT_EQ(lines.size(), 200001u);
  EXPECT_EQ(lines[0], "line 0");
  EXPECT_EQ(lines[123456], "line 123456");
  EXPECT_EQ(lines.back(), "last without newline");
  ::unlink(path.c_str());
}

TEST(LineReader, CutsLongLinesAndKeepsGoing) {
  std::string text = "short\n" + std::string(3 << 20, 'x') + "\nafter\n";
  std::string path = TempFile(text);
  bool truncated = false;
  auto lines = Lines(path, {.max_line = 1000}, &truncated);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1].size(), 1000u);
  EXPECT_EQ(lines[2], "after");
  EXPECT_TRUE(truncated);
  ::unlink(path.c_str());
}

TEST(LineReader, EndlessInputStopsWithAnError) {
  auto reader = LineReader::Open("/dev/zero", {.max_line = 4096, .max_total = 8 << 20});
  ASSERT_TRUE(reader.ok());
  std::string_view line;
  int n = 0;
  while (reader->Next(&line)) ++n;
  EXPECT_LE(n, 1);
  EXPECT_EQ(reader->status().code(), StatusCode::kResourceExhausted);
}

TEST(LineReader, FifoWithoutWriterDoesNotHang) {
  std::string path = "/tmp/fabcheck-input-fifo-" + std::to_string(::getpid());
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  auto start = std::chrono::steady_clock::now();
  auto reader = LineReader::Open(path);
  ASSERT_TRUE(reader.ok());
  std::string_view line;
  EXPECT_FALSE(reader->Next(&line));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  ::unlink(path.c_str());
}


double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(ReadFileBounded, AFileOverTheCapIsRefusedBeforeItIsRead) {
  std::string path = TempFile(std::string(4096, 'x'));
  EXPECT_EQ(ReadFileBounded(path, 4095).status().code(), StatusCode::kResourceExhausted);
  EXPECT_TRUE(ReadFileBounded(path, 4096).ok());
  EXPECT_EQ(ReadFileBounded("").status().code(), StatusCode::kInvalidArgument);
  ::unlink(path.c_str());
}

TEST(ReadFileBounded, AFifoWhoseWriterStaysSilentTimesOut) {
  std::string fifo = "/tmp/fabcheck-input-silent-" + std::to_string(::getpid());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  int writer = ::open(fifo.c_str(), O_RDWR | O_NONBLOCK);  // holds a writer end open, writes nothing
  ASSERT_GE(writer, 0);
  auto start = std::chrono::steady_clock::now();
  auto text = ReadFileBounded(fifo, 1 << 20, 300);
  EXPECT_EQ(text.status().code(), StatusCode::kDeadlineExceeded) << text.status().ToString();
  EXPECT_LT(SecondsSince(start), 3);
  auto reader = LineReader::Open(fifo, {.idle_timeout_ms = 300});
  ASSERT_TRUE(reader.ok());
  std::string_view line;
  EXPECT_FALSE(reader->Next(&line));
  EXPECT_EQ(reader->status().code(), StatusCode::kDeadlineExceeded);
  ::close(writer);
  ::unlink(fifo.c_str());
}

TEST(ReadFileBounded, AFifoWithAWriterIsReadWhole) {
  std::string fifo = "/tmp/fabcheck-input-writer-" + std::to_string(::getpid());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  int fd = ::open(fifo.c_str(), O_RDWR);  // the writer is there before the reader opens
  ASSERT_GE(fd, 0);
  std::thread writer([fd] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_EQ(::write(fd, "a\n", 2), 2);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_EQ(::write(fd, "b\n", 2), 2);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ::close(fd);
  });
  auto text = ReadFileBounded(fifo, 1 << 20, 5000);
  writer.join();
  ::unlink(fifo.c_str());
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(*text, "a\nb\n");
}

// Runs `body` with fd 0 replaced by the read end of a pipe holding `input`.
template <typename Body>
void WithStdin(const std::string& input, bool close_writer, Body body) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ASSERT_EQ(::write(fds[1], input.data(), input.size()), static_cast<ssize_t>(input.size()));
  if (close_writer) ::close(fds[1]);
  int saved = ::dup(STDIN_FILENO);
  ::dup2(fds[0], STDIN_FILENO);
  ::close(fds[0]);
  body();
  ::dup2(saved, STDIN_FILENO);
  ::close(saved);
  if (!close_writer) ::close(fds[1]);
}

TEST(ReadFileBounded, StdinIsCappedTimedAndLeftOpen) {
  WithStdin("kind: Pod\n", true, [] {
    auto text = ReadFileBounded("-");
    ASSERT_TRUE(text.ok()) << text.status().ToString();
    EXPECT_EQ(*text, "kind: Pod\n");
    struct stat st {};
    EXPECT_EQ(::fstat(STDIN_FILENO, &st), 0) << "fd 0 must stay open";
  });
  WithStdin(std::string(5000, 'y'), true, [] {
    auto text = ReadFileBounded("-", 4096);
    EXPECT_EQ(text.status().code(), StatusCode::kResourceExhausted);
    EXPECT_NE(text.status().message().find("stdin"), std::string::npos) << text.status().message();
  });
  WithStdin("no end", false, [] {
    auto start = std::chrono::steady_clock::now();
    auto text = ReadFileBounded("-", 1 << 20, 200);
    EXPECT_EQ(text.status().code(), StatusCode::kDeadlineExceeded);
    EXPECT_NE(text.status().message().find("stdin"), std::string::npos) << text.status().message();
    EXPECT_LT(SecondsSince(start), 3);
  });
}

}  // namespace
}  // namespace fabcheck
