// Address blobs from elsewhere are refused with a message that says why.
#include "address.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "layout.h"

namespace {

using smd_shm::AddressBlob;

AddressBlob valid(const smd_shm::NodeIdentity &node) {
  AddressBlob a;
  memset(&a, 0, sizeof a);
  a.magic = smd_shm::kAddressMagic;
  a.version = smd_shm::kAddressVersion;
  a.pid = 1234;
  a.region_fd = 5;
  a.local_rank = 1;
  a.local_size = 2;
  a.cell_size = smd_shm::kCellSize;
  a.ring_cells = smd_shm::kRingCells;
  a.region_id = 42;
  a.region_bytes = smd_shm::region_bytes(2);
  a.node = node;
  return a;
}

std::string refusal(const AddressBlob &a, const smd_shm::NodeIdentity &self,
                    size_t size = sizeof(AddressBlob)) {
  AddressBlob out;
  char why[400] = "";
  bool ok = smd_shm::check_address(&a, size, self, 2, &out, why, sizeof why);
  return ok ? std::string() : std::string(why);
}

TEST(Address, AcceptsOwnNode) {
  smd_shm::NodeIdentity self;
  ASSERT_TRUE(smd_shm::read_node_identity(&self));
  EXPECT_EQ(refusal(valid(self), self), "");
}

TEST(Address, RefusesOtherHost) {
  smd_shm::NodeIdentity self;
  ASSERT_TRUE(smd_shm::read_node_identity(&self));
  AddressBlob a = valid(self);
  a.node.boot_id[3] ^= 0xff;
  EXPECT_NE(refusal(a, self).find("another host"), std::string::npos);
}

TEST(Address, RefusesOtherPidNamespace) {
  smd_shm::NodeIdentity self;
  ASSERT_TRUE(smd_shm::read_node_identity(&self));
  AddressBlob a = valid(self);
  a.node.pid_ns = self.pid_ns + 1;
  EXPECT_NE(refusal(a, self).find("PID namespace"), std::string::npos);
}

TEST(Address, RefusesForeignOrMismatchedBlobs) {
  smd_shm::NodeIdentity self;
  ASSERT_TRUE(smd_shm::read_node_identity(&self));
  AddressBlob a = valid(self);
  EXPECT_NE(refusal(a, self, 12).find("has 12 bytes"), std::string::npos);
  a.magic = 7;
  EXPECT_NE(refusal(a, self).find("bad magic"), std::string::npos);
  a = valid(self);
  a.cell_size = 4096;
  EXPECT_NE(refusal(a, self).find("mixed plugin builds"), std::string::npos);
  a = valid(self);
  a.local_rank = 2;
  EXPECT_NE(refusal(a, self).find("inconsistent"), std::string::npos);
}

}  // namespace
