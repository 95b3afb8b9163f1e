// The one binary codec: what ByteWriter writes, ByteReader reads back,
// little-endian on every host; a record cut anywhere is a named error.
#include <gtest/gtest.h>

#include <string>

#include "../bootstrap/expect_error.h"
#include "core/util/byte_codec.h"

using namespace smd;

namespace {

Bytes sample() {
  Bytes b;
  ByteWriter(b).u8(7).u32(0x01020304u).u64(0x1122334455667788ull).blob("host").raw("ab", 2);
  return b;
}

}  // namespace

TEST(ByteCodec, WhatIsWrittenReadsBack) {
  Bytes b = sample();
  ByteReader r(b, "sample");
  EXPECT_EQ(r.u8("u8"), 7);
  EXPECT_EQ(r.u32("u32"), 0x01020304u);
  EXPECT_EQ(r.u64("u64"), 0x1122334455667788ull);
  EXPECT_EQ(r.text("text"), "host");
  EXPECT_EQ(r.raw_text(2, "raw"), "ab");
  EXPECT_TRUE(r.done());
}

TEST(ByteCodec, IntegersAreLittleEndianAndLengthsPrefixed) {
  Bytes b;
  ByteWriter(b).u32(0x01020304u).blob(Bytes{9});
  EXPECT_EQ(b, (Bytes{4, 3, 2, 1, 1, 0, 0, 0, 9}));
  EXPECT_EQ(load_u32_le(b.data()), 0x01020304u);
  store_u32_le(b.data(), 5);
  EXPECT_EQ(b[0], 5);
  EXPECT_EQ(b[3], 0);
}

TEST(ByteCodec, ARecordCutAnywhereNamesTheSubjectAndField) {
  Bytes whole = sample();
  for (size_t size = 0; size < whole.size(); ++size) {
    ByteReader r(whole.data(), size, "sample record");
    EXPECT_SMD_ERROR(SMD_ERR_BOOTSTRAP, "malformed sample record: ",
                     {
                       r.u8("u8");
                       r.u32("u32");
                       r.u64("u64");
                       r.text("text");
                       r.raw_text(2, "raw");
                     })
        << "cut at " << size;
  }
  ByteReader r(whole.data(), 3, "sample record");
  r.u8("u8");
  EXPECT_SMD_ERROR(SMD_ERR_BOOTSTRAP, "u32 cut short (2 bytes left, 4 needed)", r.u32("u32"));
}

TEST(ByteCodec, ALengthLargerThanTheRestAllocatesNothing) {
  Bytes b;
  ByteWriter(b).u32(0xffffffffu).u8(1);
  EXPECT_SMD_ERROR(SMD_ERR_BOOTSTRAP, "blob cut short", ByteReader(b, "r").bytes("blob"));
  EXPECT_SMD_ERROR(SMD_ERR_BOOTSTRAP, "claims 4294967295 items in 1 bytes",
                   ByteReader(b, "r").count("list", 1));
}
