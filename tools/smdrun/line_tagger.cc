#include "line_tagger.h"

namespace smdrun {

void LineTagger::emit(std::string_view tail, std::string &out) {
  out += prefix_;
  out += partial_;
  out += tail;
  partial_.clear();
}

void LineTagger::feed(std::string_view data, std::string &out) {
  if (prefix_.empty()) {
    out += data;
    return;
  }
  for (size_t nl; (nl = data.find('\n')) != std::string_view::npos;) {
    emit(data.substr(0, nl + 1), out);
    data.remove_prefix(nl + 1);
  }
  while (partial_.size() + data.size() >= max_line_) {
    size_t take = max_line_ - partial_.size();
    emit(data.substr(0, take), out);
    out += '\n';
    data.remove_prefix(take);
  }
  partial_ += data;
}

void LineTagger::finish(std::string &out) {
  if (partial_.empty()) return;
  emit("\n", out);
}

}  // namespace smdrun
