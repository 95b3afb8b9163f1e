// The store's wire format: exact bytes, round trips, and refusal of every
// kind of malformed frame without crashing.
#include <gtest/gtest.h>

#include <random>

#include "core/bootstrap/store_protocol.h"
#include "expect_error.h"

namespace smd::wire {
namespace {

Message make(Op op) {
  Message m;
  m.op = op;
  return m;
}

std::vector<Message> one_of_each() {
  std::vector<Message> all;
  Message hello = make(Op::kHello);
  hello.token = "job-token";
  hello.rank = 3;
  hello.world_size = 16;
  hello.epoch = 7;
  all.push_back(hello);
  Message set = make(Op::kSet);
  set.key = std::string("k\0ey", 4);
  set.value = {0, 1, 2, 255};
  all.push_back(set);
  Message get = make(Op::kGet);
  get.key = "addr/7";
  get.number = -1;
  all.push_back(get);
  Message add = make(Op::kAdd);
  add.key = "counter";
  add.number = INT64_MIN;
  all.push_back(add);
  Message check = make(Op::kCheck);
  check.keys = {"a", "", "ccc"};
  all.push_back(check);
  all.push_back(make(Op::kFailedRanks));
  all.push_back(make(Op::kGoodbye));
  all.push_back(make(Op::kOk));
  Message value = make(Op::kValue);
  value.value = Bytes(1000, 7);
  all.push_back(value);
  Message integer = make(Op::kInteger);
  integer.number = 0x0102030405060708;
  all.push_back(integer);
  Message flags = make(Op::kFlags);
  flags.flags = {true, false, true};
  all.push_back(flags);
  Message ranks = make(Op::kRanks);
  ranks.ranks = {0, 5, 2147483647};
  all.push_back(ranks);
  all.push_back(make(Op::kTimeout));
  Message error = make(Op::kError);
  error.reason = "job token mismatch";
  all.push_back(error);
  Message retry = make(Op::kRetry);
  retry.reason = "another epoch";
  all.push_back(retry);
  return all;
}

void expect_same(const Message &a, const Message &b) {
  EXPECT_EQ(a.op, b.op);
  EXPECT_EQ(a.version, b.version);
  EXPECT_EQ(a.token, b.token);
  EXPECT_EQ(a.rank, b.rank);
  EXPECT_EQ(a.world_size, b.world_size);
  EXPECT_EQ(a.epoch, b.epoch);
  EXPECT_EQ(a.key, b.key);
  EXPECT_EQ(a.value, b.value);
  EXPECT_EQ(a.number, b.number);
  EXPECT_EQ(a.keys, b.keys);
  EXPECT_EQ(a.flags, b.flags);
  EXPECT_EQ(a.ranks, b.ranks);
  EXPECT_EQ(a.reason, b.reason);
}

// Decoding must either work or throw smd::Error: nothing else, no crash.
void decode_or_refuse(const Bytes &frame) {
  try {
    size_t n = frame_size(frame.data(), frame.size(), kMaxFrame);
    if (n) decode(frame.data(), n);
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), SMD_ERR_BOOTSTRAP);
  }
}

TEST(StoreProtocol, ExactLittleEndianBytes) {
  Message m = make(Op::kSet);
  m.key = "k";
  m.value = {0xaa};
  Bytes expect = {11, 0, 0, 0, 2, 1, 0, 0, 0, 'k', 1, 0, 0, 0, 0xaa};
  EXPECT_EQ(encode(m), expect);

  Message i = make(Op::kInteger);
  i.number = -2;
  Bytes expect_i = {9, 0, 0, 0, 130, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  EXPECT_EQ(encode(i), expect_i);

  Message h = make(Op::kHello);
  h.epoch = 3;
  Bytes hello = encode(h);
  ASSERT_EQ(hello.size(), 29u);
  EXPECT_EQ(Bytes(hello.begin() + 5, hello.begin() + 9), (Bytes{'S', 'M', 'D', 'S'}));
  EXPECT_EQ(Bytes(hello.begin() + 9, hello.begin() + 13), (Bytes{2, 0, 0, 0}));
  // version 2: the epoch after the world size
  EXPECT_EQ(Bytes(hello.end() - 4, hello.end()), (Bytes{3, 0, 0, 0}));
}

TEST(StoreProtocol, RoundTripEveryOpcode) {
  for (const Message &m : one_of_each()) {
    SCOPED_TRACE(op_name(m.op));
    Bytes frame = encode(m);
    EXPECT_EQ(frame_size(frame.data(), frame.size(), kMaxFrame), frame.size());
    expect_same(decode(frame.data(), frame.size()), m);
  }
}

TEST(StoreProtocol, FrameSizeWaitsForTheWholeFrame) {
  Bytes frame = encode(one_of_each()[1]);
  for (size_t n = 0; n < frame.size(); ++n)
    EXPECT_EQ(frame_size(frame.data(), n, kMaxFrame), 0u) << n;
  Bytes two = frame;
  two.insert(two.end(), frame.begin(), frame.end());
  EXPECT_EQ(frame_size(two.data(), two.size(), kMaxFrame), frame.size());
}

TEST(StoreProtocol, RefusesBadLengths) {
  Bytes huge = {0xff, 0xff, 0xff, 0xff, 1};
  EXPECT_SMD_ERROR(SMD_ERR_BOOTSTRAP, "over the limit",
                   frame_size(huge.data(), huge.size(), kMaxFrame));
  Bytes just_over = {0x01, 0x00, 0x00, 0x04};  // kMaxFrame + 1
  EXPECT_SMD_ERROR(SMD_ERR_BOOTSTRAP, "over the limit",
                   frame_size(just_over.data(), just_over.size(), kMaxFrame));
  Bytes empty = {0, 0, 0, 0};
  EXPECT_SMD_ERROR(SMD_ERR_BOOTSTRAP, "empty frame",
                   frame_size(empty.data(), empty.size(), kMaxFrame));
  Bytes hello = encode(make(Op::kHello));
  EXPECT_SMD_ERROR(SMD_ERR_BOOTSTRAP, "over the limit", frame_size(hello.data(), hello.size(), 8));
}

TEST(StoreProtocol, RefusesEveryTruncation) {
  for (const Message &m : one_of_each()) {
    Bytes frame = encode(m);
    for (size_t body = 1; body + kHeaderSize < frame.size(); ++body) {
      Bytes cut(frame.begin(), frame.begin() + kHeaderSize + body);
      for (int i = 0; i < 4; ++i) cut[i] = static_cast<uint8_t>(body >> (8 * i));
      EXPECT_SMD_ERROR(SMD_ERR_BOOTSTRAP, "malformed store message", decode(cut.data(), cut.size()))
          << op_name(m.op) << " cut to " << body;
    }
  }
}

TEST(StoreProtocol, RefusesLeftoverBytes) {
  for (const Message &m : one_of_each()) {
    Bytes frame = encode(m);
    frame.push_back(0);
    frame[0] += 1;
    EXPECT_SMD_ERROR(SMD_ERR_BOOTSTRAP, "left over", decode(frame.data(), frame.size()))
        << op_name(m.op);
  }
}

TEST(StoreProtocol, RefusesUnknownOpcodes) {
  for (int op : {0, 8, 100, 127, 136, 200, 255}) {
    Bytes frame = {1, 0, 0, 0, static_cast<uint8_t>(op)};
    EXPECT_SMD_ERROR(SMD_ERR_BOOTSTRAP, "unknown opcode", decode(frame.data(), frame.size())) << op;
  }
}

TEST(StoreProtocol, RefusesForeignHelloAndBadFields) {
  Bytes hello = encode(make(Op::kHello));
  hello[5] = 'X';
  EXPECT_SMD_ERROR(SMD_ERR_BOOTSTRAP, "magic", decode(hello.data(), hello.size()));

  // A count that promises more items than bytes: refused before allocating.
  Bytes check = {5, 0, 0, 0, 5, 0xff, 0xff, 0xff, 0xff};
  EXPECT_SMD_ERROR(SMD_ERR_BOOTSTRAP, "claims", decode(check.data(), check.size()));
  Bytes ranks = {9, 0, 0, 0, 132, 2, 0, 0, 0, 1, 0, 0, 0};
  EXPECT_SMD_ERROR(SMD_ERR_BOOTSTRAP, "claims", decode(ranks.data(), ranks.size()));
  Bytes blob = {9, 0, 0, 0, 129, 0xff, 0xff, 0xff, 0x7f, 1, 2, 3, 4};
  EXPECT_SMD_ERROR(SMD_ERR_BOOTSTRAP, "cut short", decode(blob.data(), blob.size()));
  Bytes flags = {6, 0, 0, 0, 131, 1, 0, 0, 0, 2};
  EXPECT_SMD_ERROR(SMD_ERR_BOOTSTRAP, "flag value", decode(flags.data(), flags.size()));
}

TEST(StoreProtocol, EncodeRefusesOversizedMessages) {
  Message m = make(Op::kSet);
  m.key = "big";
  m.value.resize(kMaxFrame);
  EXPECT_SMD_ERROR(SMD_ERR_INVALID_ARGUMENT, "over the limit of 64 MiB", encode(m));
}

TEST(StoreProtocol, RandomBytesNeverCrash) {
  std::mt19937 rng(12345);
  for (int i = 0; i < 20000; ++i) {
    Bytes frame(5 + rng() % 40);
    for (auto &b : frame) b = static_cast<uint8_t>(rng());
    uint32_t body = static_cast<uint32_t>(frame.size() - 4);
    // Mostly truthful lengths, so the decoder itself gets exercised.
    if (i % 4)
      for (int k = 0; k < 4; ++k) frame[k] = static_cast<uint8_t>(body >> (8 * k));
    if (i % 3 == 0) frame[4] = static_cast<uint8_t>(1 + rng() % 7);
    decode_or_refuse(frame);
  }
}

TEST(StoreProtocol, MutatedFramesNeverCrash) {
  std::mt19937 rng(777);
  std::vector<Message> all = one_of_each();
  for (int i = 0; i < 20000; ++i) {
    Bytes frame = encode(all[rng() % all.size()]);
    int flips = 1 + rng() % 3;
    for (int f = 0; f < flips; ++f)
      frame[kHeaderSize + rng() % (frame.size() - kHeaderSize)] ^=
          static_cast<uint8_t>(1u << (rng() % 8));
    decode_or_refuse(frame);
  }
}

TEST(StoreProtocol, PrintableKeys) {
  EXPECT_EQ(printable("addr/3"), "addr/3");
  EXPECT_EQ(printable(std::string("a\x01\\b\0", 5)), "a\\x01\\x5cb\\x00");
  std::string shown = printable(std::string(1000, 'x'));
  EXPECT_LT(shown.size(), 300u);
  EXPECT_NE(shown.find("(1000 bytes)"), std::string::npos);
}

}  // namespace
}  // namespace smd::wire
