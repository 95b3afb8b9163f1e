/* wire.c - encoding of frame headers (see wire.h for the protocol).
 *
 * Fields are written byte by byte in network order rather than by copying
 * a C struct: struct padding and byte order differ between compilers and
 * machines, and ranks of one job may run on different ones. */
#include "wire.h"

void tcp_put_u16(unsigned char *p, uint16_t v) {
  p[0] = (unsigned char)(v >> 8);
  p[1] = (unsigned char)v;
}

void tcp_put_u32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = (unsigned char)(v >> (24 - 8 * i));
}

void tcp_put_u64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = (unsigned char)(v >> (56 - 8 * i));
}

uint16_t tcp_get_u16(const unsigned char *p) { return (uint16_t)((p[0] << 8) | p[1]); }

uint32_t tcp_get_u32(const unsigned char *p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | p[i];
  return v;
}

uint64_t tcp_get_u64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | p[i];
  return v;
}

void tcp_frame_encode(unsigned char out[TCP_HEADER_SIZE], const tcp_frame *f) {
  tcp_put_u32(out, f->kind);
  tcp_put_u32(out + 4, f->flags);
  tcp_put_u64(out + 8, f->tag);
  tcp_put_u64(out + 16, f->size);
  tcp_put_u64(out + 24, f->id);
}

void tcp_frame_decode(const unsigned char in[TCP_HEADER_SIZE], tcp_frame *f) {
  f->kind = tcp_get_u32(in);
  f->flags = tcp_get_u32(in + 4);
  f->tag = tcp_get_u64(in + 8);
  f->size = tcp_get_u64(in + 16);
  f->id = tcp_get_u64(in + 24);
}

const char *tcp_frame_name(uint32_t kind) {
  switch (kind) {
    case TCP_FRAME_HELLO: return "HELLO";
    case TCP_FRAME_EAGER: return "EAGER";
    case TCP_FRAME_RTS: return "RTS";
    case TCP_FRAME_CTS: return "CTS";
    case TCP_FRAME_DATA: return "DATA";
    case TCP_FRAME_RETRACT: return "RETRACT";
  }
  return "unknown";
}
