#include "core/bootstrap/store_protocol.h"

#include <cstdio>

#include "core/util/byte_codec.h"
#include "core/util/error.h"

namespace smd::wire {
namespace {

// A frame: its length prefix filled in last; every length checked against
// kMaxFrame before it is written.
class Writer {
 public:
  Writer() : out_(kHeaderSize), w_(out_) {}
  void u8(uint8_t v) { w_.u8(v); }
  void u32(uint32_t v) { w_.u32(v); }
  void i32(int32_t v) { w_.u32(static_cast<uint32_t>(v)); }
  void i64(int64_t v) { w_.u64(static_cast<uint64_t>(v)); }
  void blob(const uint8_t *data, size_t size) {
    check_size(size);
    w_.blob(data, size);
  }
  void blob(const std::string &s) {
    check_size(s.size());
    w_.blob(s);
  }
  void count(size_t n) {
    check_size(n);
    w_.u32(static_cast<uint32_t>(n));
  }
  Bytes finish() {
    size_t body = out_.size() - kHeaderSize;
    check_size(body);
    store_u32_le(out_.data(), static_cast<uint32_t>(body));
    return std::move(out_);
  }

 private:
  static void check_size(size_t n) {
    if (n > kMaxFrame)
      fail(SMD_ERR_INVALID_ARGUMENT, "a store message of %zu bytes is over the limit of %u MiB", n,
           kMaxFrame >> 20);
  }
  Bytes out_;
  ByteWriter w_;
};

}  // namespace

const char *op_name(Op op) {
  switch (op) {
    case Op::kHello: return "HELLO";
    case Op::kSet: return "SET";
    case Op::kGet: return "GET";
    case Op::kAdd: return "ADD";
    case Op::kCheck: return "CHECK";
    case Op::kFailedRanks: return "FAILED_RANKS";
    case Op::kGoodbye: return "GOODBYE";
    case Op::kOk: return "OK";
    case Op::kValue: return "VALUE";
    case Op::kInteger: return "INTEGER";
    case Op::kFlags: return "FLAGS";
    case Op::kRanks: return "RANKS";
    case Op::kTimeout: return "TIMEOUT";
    case Op::kError: return "ERROR";
    case Op::kRetry: return "RETRY";
  }
  return "UNKNOWN";
}

Bytes encode(const Message &m) {
  Writer w;
  w.u8(static_cast<uint8_t>(m.op));
  switch (m.op) {
    case Op::kHello:
      w.u32(kMagic);
      w.u32(m.version);
      w.blob(m.token);
      w.i32(m.rank);
      w.i32(m.world_size);
      if (m.version >= 2) w.u32(m.epoch);
      break;
    case Op::kSet:
      w.blob(m.key);
      w.blob(m.value.data(), m.value.size());
      break;
    case Op::kGet:
    case Op::kAdd:
      w.blob(m.key);
      w.i64(m.number);
      break;
    case Op::kCheck:
      w.count(m.keys.size());
      for (const auto &k : m.keys) w.blob(k);
      break;
    case Op::kValue: w.blob(m.value.data(), m.value.size()); break;
    case Op::kInteger: w.i64(m.number); break;
    case Op::kFlags:
      w.count(m.flags.size());
      for (bool f : m.flags) w.u8(f ? 1 : 0);
      break;
    case Op::kRanks:
      w.count(m.ranks.size());
      for (int32_t r : m.ranks) w.i32(r);
      break;
    case Op::kError:
    case Op::kRetry: w.blob(m.reason); break;
    case Op::kFailedRanks:
    case Op::kGoodbye:
    case Op::kOk:
    case Op::kTimeout: break;
  }
  return w.finish();
}

uint32_t frame_body_size(const uint8_t *header, uint32_t max_frame) {
  uint32_t len = load_u32_le(header);
  if (len == 0) fail(SMD_ERR_BOOTSTRAP, "malformed store message: empty frame");
  if (len > max_frame)
    fail(SMD_ERR_BOOTSTRAP, "malformed store message: frame of %u bytes is over the limit of %u",
         len, max_frame);
  return len;
}

size_t frame_size(const uint8_t *data, size_t size, uint32_t max_frame) {
  if (size < kHeaderSize) return 0;
  size_t total = kHeaderSize + frame_body_size(data, max_frame);
  return size >= total ? total : 0;
}

Message decode(const uint8_t *frame, size_t size) {
  if (size < kHeaderSize + 1)
    fail(SMD_ERR_BOOTSTRAP, "malformed store message: frame of %zu bytes", size);
  ByteReader r(frame + kHeaderSize, size - kHeaderSize, "store message");
  Message m;
  uint8_t op = r.u8("opcode");
  m.op = static_cast<Op>(op);
  switch (m.op) {
    case Op::kHello: {
      uint32_t magic = r.u32("HELLO magic");
      if (magic != kMagic)
        fail(SMD_ERR_BOOTSTRAP, "malformed store message: HELLO magic 0x%08x is not smd's", magic);
      m.version = r.u32("HELLO version");
      m.token = r.text("HELLO token");
      m.rank = static_cast<int32_t>(r.u32("HELLO rank"));
      m.world_size = static_cast<int32_t>(r.u32("HELLO world size"));
      // An older client's HELLO still decodes, so that the refusal can
      // name the version rather than call the frame malformed.
      if (m.version >= 2) m.epoch = r.u32("HELLO epoch");
      break;
    }
    case Op::kSet:
      m.key = r.text("SET key");
      m.value = r.bytes("SET value");
      break;
    case Op::kGet:
      m.key = r.text("GET key");
      m.number = static_cast<int64_t>(r.u64("GET timeout"));
      break;
    case Op::kAdd:
      m.key = r.text("ADD key");
      m.number = static_cast<int64_t>(r.u64("ADD delta"));
      break;
    case Op::kCheck: {
      uint32_t n = r.count("CHECK key count", 4);
      m.keys.reserve(n);
      for (uint32_t i = 0; i < n; ++i) m.keys.push_back(r.text("CHECK key"));
      break;
    }
    case Op::kValue: m.value = r.bytes("VALUE value"); break;
    case Op::kInteger: m.number = static_cast<int64_t>(r.u64("INTEGER value")); break;
    case Op::kFlags: {
      uint32_t n = r.count("FLAGS count", 1);
      m.flags.reserve(n);
      for (uint32_t i = 0; i < n; ++i) {
        uint8_t f = r.u8("FLAGS item");
        if (f > 1) fail(SMD_ERR_BOOTSTRAP, "malformed store message: flag value %u", f);
        m.flags.push_back(f == 1);
      }
      break;
    }
    case Op::kRanks: {
      uint32_t n = r.count("RANKS count", 4);
      m.ranks.reserve(n);
      for (uint32_t i = 0; i < n; ++i) m.ranks.push_back(static_cast<int32_t>(r.u32("RANKS item")));
      break;
    }
    case Op::kError: m.reason = r.text("ERROR reason"); break;
    case Op::kRetry: m.reason = r.text("RETRY reason"); break;
    case Op::kFailedRanks:
    case Op::kGoodbye:
    case Op::kOk:
    case Op::kTimeout: break;
    default: fail(SMD_ERR_BOOTSTRAP, "malformed store message: unknown opcode %u", op);
  }
  if (r.left() != 0)
    fail(SMD_ERR_BOOTSTRAP, "malformed store message: %zu bytes left over after %s", r.left(),
         op_name(m.op));
  return m;
}

std::string printable(const std::string &key) {
  constexpr size_t kMaxShown = 200;
  std::string out;
  for (size_t i = 0; i < key.size() && i < kMaxShown; ++i) {
    unsigned char c = static_cast<unsigned char>(key[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char esc[8];
      snprintf(esc, sizeof esc, "\\x%02x", c);
      out += esc;
    }
  }
  if (key.size() > kMaxShown) out += format("... (%zu bytes)", key.size());
  return out;
}

}  // namespace smd::wire
