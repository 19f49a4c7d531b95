// FIPS 180-2 appendix B vectors for SHA-256 and RFC 4231 §4 vectors for HMAC-SHA256, kept from
// the hand-written implementation that OpenSSL replaced.

#include "ddprun/util/crypto.hpp"

#include <gtest/gtest.h>

using namespace ddprun::util;

TEST(Sha256, MatchesFips180Vectors) {
  EXPECT_EQ(to_hex(sha256("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(to_hex(sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(to_hex(sha256("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Sha256, MillionAsFedInUnevenPieces) {
  Sha256 s;
  const std::string piece(997, 'a');
  std::size_t fed = 0;
  while (fed + piece.size() <= 1000000) {
    s.update(piece);
    fed += piece.size();
  }
  s.update(std::string(1000000 - fed, 'a'));
  EXPECT_EQ(to_hex(s.final()), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, PaddingBoundaries) {
  // 55 bytes fit one block with the length; 56 need a second block.
  EXPECT_EQ(to_hex(sha256(std::string(55, 'a'))),
            "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(to_hex(sha256(std::string(56, 'a'))),
            "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
}

TEST(HmacSha256, MatchesRfc4231Vectors) {
  EXPECT_EQ(to_hex(hmac_sha256(std::string(20, '\x0b'), "Hi There")),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  EXPECT_EQ(to_hex(hmac_sha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  EXPECT_EQ(to_hex(hmac_sha256(std::string(20, '\xaa'), std::string(50, '\xdd'))),
            "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
}

TEST(HmacSha256, HashesKeysLongerThanABlock) {
  const std::string key(131, '\xaa');
  EXPECT_EQ(to_hex(hmac_sha256(key, "Test Using Larger Than Block-Size Key - Hash Key First")),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  EXPECT_EQ(to_hex(hmac_sha256(key,
                               "This is a test using a larger than block-size key and a larger "
                               "than block-size data. The key needs to be hashed before being "
                               "used by the HMAC algorithm.")),
            "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
}

TEST(ConstantTimeEqual, ComparesLengthAndBytes) {
  EXPECT_TRUE(constant_time_equal("abc", "abc"));
  EXPECT_FALSE(constant_time_equal("abc", "abd"));
  EXPECT_FALSE(constant_time_equal("abc", "ab"));
  EXPECT_TRUE(constant_time_equal("", ""));
}
