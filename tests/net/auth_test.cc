// The one token policy (file mode, length, constant-time bearer check) and
// the perf handshake's HMAC, against the FIPS and RFC 4231 vectors.
#include "net/auth.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "net/hmac.h"

namespace fabcheck::net {
namespace {

std::string WriteFile(const std::string& name, const std::string& text, mode_t mode) {
  std::string path = ::testing::TempDir() + "/fc-net-" + name + "-" + std::to_string(::getpid());
  std::ofstream(path) << text;
  ::chmod(path.c_str(), mode);
  return path;
}

TEST(Sha256, FipsVectors) {
  EXPECT_EQ(ToHex(Sha256("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(ToHex(Sha256("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(ToHex(Sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(ToHex(Sha256(std::string(1000000, 'a'))),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(HmacSha256, Rfc4231Vectors) {
  EXPECT_EQ(ToHex(HmacSha256(std::string(20, '\x0b'), "Hi There")),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  EXPECT_EQ(ToHex(HmacSha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  EXPECT_EQ(ToHex(HmacSha256(std::string(131, '\xaa'), "Test Using Larger Than Block-Size Key - Hash Key First")),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST(Mac, BindsRolesAndNonces) {
  auto c = ClientMac("token-123", "s-nonce", "c-nonce");
  EXPECT_EQ(c.size(), 64u);
  EXPECT_NE(c, ServerMac("token-123", "s-nonce", "c-nonce"));  // no reflection of one side's proof
  EXPECT_NE(c, ClientMac("token-124", "s-nonce", "c-nonce"));
  EXPECT_NE(c, ClientMac("token-123", "s-nonce2", "c-nonce"));
  EXPECT_TRUE(ConstantTimeEqual(c, ClientMac("token-123", "s-nonce", "c-nonce")));
  EXPECT_FALSE(ConstantTimeEqual("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEqual("abc", "ab"));
}

TEST(Bearer, ExactMatchOnly) {
  EXPECT_TRUE(BearerMatches("Bearer s3cret-token", "s3cret-token"));
  EXPECT_FALSE(BearerMatches("Bearer s3cret-tokem", "s3cret-token"));
  EXPECT_FALSE(BearerMatches("Bearer s3cret-token ", "s3cret-token"));
  EXPECT_FALSE(BearerMatches("bearer s3cret-token", "s3cret-token"));
  EXPECT_FALSE(BearerMatches("s3cret-token", "s3cret-token"));
  EXPECT_FALSE(BearerMatches("", "s3cret-token"));
  EXPECT_FALSE(BearerMatches("Bearer ", ""));  // no token configured never matches
}

TEST(TokenFile, FirstLineTrimmedOwnerOnly) {
  auto ok = ReadTokenFile(WriteFile("ok", "  correct-horse-battery \nsecond line\n", 0600));
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(*ok, "correct-horse-battery");
  EXPECT_TRUE(ReadTokenFile(WriteFile("ro", "correct-horse-battery", 0400)).ok());
}

TEST(TokenFile, RefusesWhatAnotherUserCouldRead) {
  auto open = ReadTokenFile(WriteFile("open", "correct-horse-battery\n", 0644));
  ASSERT_FALSE(open.ok());
  EXPECT_EQ(open.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(open.status().message().find("chmod 600"), std::string::npos) << open.status().message();
}

TEST(TokenFile, RefusesShortEmptyMissingAndNotAFile) {
  auto shorty = ReadTokenFile(WriteFile("short", "abc\n", 0600));
  ASSERT_FALSE(shorty.ok());
  EXPECT_NE(shorty.status().message().find("shorter than 8"), std::string::npos) << shorty.status().message();
  auto empty = ReadTokenFile(WriteFile("empty", "\n\n", 0600));
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("empty"), std::string::npos);
  EXPECT_FALSE(ReadTokenFile("/nonexistent/token").ok());
  EXPECT_FALSE(ReadTokenFile("").ok());
  auto dir = ReadTokenFile(::testing::TempDir());
  ASSERT_FALSE(dir.ok());
  auto huge = ReadTokenFile(WriteFile("huge", std::string(100000, 'x'), 0600));
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.status().message().find("longer than"), std::string::npos) << huge.status().message();
}

TEST(TokenFile, AFifoDoesNotBlock) {
  std::string path = ::testing::TempDir() + "/fc-net-fifo-" + std::to_string(::getpid());
  ::unlink(path.c_str());
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  auto r = ReadTokenFile(path);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not a regular file"), std::string::npos) << r.status().message();
  ::unlink(path.c_str());
}

TEST(RandomToken, LongEnoughAndFresh) {
  auto a = RandomToken(), b = RandomToken();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->size(), 32u);
  EXPECT_GE(a->size(), kMinTokenLength);
  EXPECT_NE(*a, *b);
}

}  // namespace
}  // namespace fabcheck::net
