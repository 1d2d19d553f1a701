// File: core/status.h
// Status and StatusOr<T>: how every function that can fail on user input reports it.
// No exceptions cross our code; a Status carries a code and a one-line message that
// each layer may prefix with context (file:line, field). Shaped like leveldb's Status
// and absl::StatusOr. Example:
//   StatusOr<double> bw = ParseQuantity("200 Gb/s", Dim::kBandwidth);
//   if (!bw.ok()) return bw.status();
#ifndef NDTWIN_CORE_STATUS_H_
#define NDTWIN_CORE_STATUS_H_

#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "core/check.h"

namespace ndt {

enum class StatusCode {
  kOk = 0,
  kInvalidInput,  // a bad flag, YAML file, unit or value: the user's fault
  kNotFound,      // an unknown name (VM size, model, file)
  kInfeasible,    // well-formed but impossible (does not divide, no configuration left)
  kDoesNotFit,    // well-formed, but the model and its state exceed the GPUs' memory
  kUnsupported,   // well-formed, but not something the hardware or software does
  kSloUnmet,      // a service runs, but no rate meets its latency limits
  kInternal,      // our bug
};

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  static Status Ok() { return Status(); }
  static Status InvalidInput(std::string_view msg) { return {StatusCode::kInvalidInput, msg}; }
  static Status NotFound(std::string_view msg) { return {StatusCode::kNotFound, msg}; }
  static Status Infeasible(std::string_view msg) { return {StatusCode::kInfeasible, msg}; }
  static Status DoesNotFit(std::string_view msg) { return {StatusCode::kDoesNotFit, msg}; }
  static Status Unsupported(std::string_view msg) { return {StatusCode::kUnsupported, msg}; }
  static Status SloUnmet(std::string_view msg) { return {StatusCode::kSloUnmet, msg}; }
  static Status Internal(std::string_view msg) { return {StatusCode::kInternal, msg}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  // A well-formed request that cannot run as asked (infeasible, does not fit, no rate meets the
  // limits): a normal answer for a search to count, not an error in the input.
  bool infeasible() const {
    return code_ == StatusCode::kInfeasible || code_ == StatusCode::kDoesNotFit ||
           code_ == StatusCode::kSloUnmet;
  }
  StatusCode code() const { return code_; }
  const std::string& message() const { return msg_; }

  // Returns a copy whose message is "<prefix><message>", for adding context.
  Status WithPrefix(std::string_view prefix) const {
    return Status(code_, std::string(prefix) + msg_);
  }
  // The same reason (code) with another message, for a caller that rewords the advice.
  Status WithMessage(std::string_view msg) const { return Status(code_, msg); }
  // The message up to its advice: messages read "<what is wrong>; <how to fix it>".
  std::string Reason() const { return msg_.substr(0, msg_.find(';')); }
  // Exit code for the CLI: 2 for the user's errors, 1 for ours, 0 for OK.
  int exit_code() const {
    switch (code_) {
      case StatusCode::kOk:
        return 0;
      case StatusCode::kInternal:
        return 1;
      default:
        return 2;
    }
  }

 private:
  Status(StatusCode code, std::string_view msg) : code_(code), msg_(msg) {}
  StatusCode code_ = StatusCode::kOk;
  std::string msg_;
};

// Holds either a value or a non-OK Status.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(Status s) : v_(std::move(s)) {  // NOLINT: implicit by design
    NDT_CHECK(!std::get<Status>(v_).ok(), "StatusOr built from an OK Status without a value");
  }
  StatusOr(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(v_); }
  Status status() const { return ok() ? Status::Ok() : std::get<Status>(v_); }

  // REQUIRES: ok().
  const T& value() const& {
    NDT_CHECK(ok(), "value() on an error: " + std::get<Status>(v_).message());
    return std::get<T>(v_);
  }
  T& value() & {
    NDT_CHECK(ok(), "value() on an error: " + std::get<Status>(v_).message());
    return std::get<T>(v_);
  }
  T&& value() && {
    NDT_CHECK(ok(), "value() on an error: " + std::get<Status>(v_).message());
    return std::get<T>(std::move(v_));
  }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  std::variant<Status, T> v_;
};

#define NDT_STATUS_CONCAT_INNER_(a, b) a##b
#define NDT_STATUS_CONCAT_(a, b) NDT_STATUS_CONCAT_INNER_(a, b)

// Returns from the current function if `expr` (a Status) is not OK.
#define NDT_RETURN_IF_ERROR(expr)              \
  do {                                         \
    ::ndt::Status ndt_status_ = (expr);        \
    if (!ndt_status_.ok()) return ndt_status_; \
  } while (0)

// `lhs = value of expr` (a StatusOr), or returns its Status.
#define NDT_ASSIGN_OR_RETURN(lhs, expr)                    \
  auto NDT_STATUS_CONCAT_(ndt_so_, __LINE__) = (expr);     \
  if (!NDT_STATUS_CONCAT_(ndt_so_, __LINE__).ok())         \
    return NDT_STATUS_CONCAT_(ndt_so_, __LINE__).status(); \
  lhs = std::move(NDT_STATUS_CONCAT_(ndt_so_, __LINE__)).value()

}  // namespace ndt

#endif  // NDTWIN_CORE_STATUS_H_
