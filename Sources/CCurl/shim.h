// CCurl: libcurl for Courier's opt-in modules (CourierRealtime's Linux WebSocket byte stream and
// CourierCurl's HTTP transport). Swift cannot call C variadic functions, so the
// curl_easy_setopt/getinfo, curl_multi_setopt and curl_share_setopt shapes Courier needs are
// wrapped here as typed inline functions, and the macros Swift does not import as constants
// (shifted or composed values) are spelled out as functions.
#ifndef COURIER_CCURL_SHIM_H
#define COURIER_CCURL_SHIM_H

#include <curl/curl.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/epoll.h>
#include <sys/eventfd.h>
#else
#include <fcntl.h>
#include <sys/event.h>
#endif

// MARK: - easy options

static inline CURLcode ccurl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_easy_setopt_off(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

/// CURLOPT_WRITEFUNCTION, CURLOPT_HEADERFUNCTION and CURLOPT_READFUNCTION share this shape.
typedef size_t (*ccurl_data_callback)(char *buffer, size_t size, size_t count, void *userdata);

static inline CURLcode ccurl_easy_setopt_data_callback(CURL *handle, CURLoption option, ccurl_data_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}

static inline CURLcode ccurl_easy_setopt_seek_callback(CURL *handle, curl_seek_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_SEEKFUNCTION, callback);
}

/// CURLOPT_PREREQFUNCTION (libcurl 7.80): called on every attempt, after the connection is made or
/// reused and before the request is sent (CURL_PREREQFUNC_OK or CURL_PREREQFUNC_ABORT).
static inline CURLcode ccurl_easy_setopt_prereq_callback(CURL *handle, curl_prereq_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_PREREQFUNCTION, callback);
}

/// The version of the libcurl the process runs with (`0xXXYYZZ`), which may differ from the headers'.
static inline unsigned int ccurl_runtime_version(void) { return curl_version_info(CURLVERSION_NOW)->version_num; }

static inline int ccurl_prereqfunc_ok(void) { return CURL_PREREQFUNC_OK; }
static inline int ccurl_prereqfunc_abort(void) { return CURL_PREREQFUNC_ABORT; }

static inline CURLcode ccurl_easy_setopt_xferinfo_callback(CURL *handle, curl_xferinfo_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback);
}

/// CURLOPT_CLOSESOCKETFUNCTION: the application closes libcurl's sockets (0 on success).
static inline CURLcode ccurl_easy_setopt_closesocket_callback(CURL *handle, curl_closesocket_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_CLOSESOCKETFUNCTION, callback);
}

// MARK: - the verified certificate chain (OpenSSL)

/// The OpenSSL functions that read the chain OpenSSL verified for a connection, found at run time in
/// the process (libcurl's OpenSSL backend loaded them): no OpenSSL headers or link at build time.
/// All null when libcurl's TLS library is another one, or an OpenSSL older than 1.1.0.
typedef struct {
    void *(*verified_chain)(const void *ssl);                     // SSL_get0_verified_chain
    int (*count)(const void *stack);                              // OPENSSL_sk_num
    void *(*value)(const void *stack, int index);                 // OPENSSL_sk_value
    void *(*public_key)(const void *certificate);                 // X509_get_X509_PUBKEY
    int (*encode_public_key)(const void *key, unsigned char **out); // i2d_X509_PUBKEY
} ccurl_openssl_chain_functions;

static inline ccurl_openssl_chain_functions ccurl_openssl_chain_lookup(void) {
    ccurl_openssl_chain_functions functions = {0, 0, 0, 0, 0};
    void *process = dlopen(NULL, RTLD_LAZY);
    if (!process) return functions;
    functions.verified_chain = (void *(*)(const void *))dlsym(process, "SSL_get0_verified_chain");
    functions.count = (int (*)(const void *))dlsym(process, "OPENSSL_sk_num");
    functions.value = (void *(*)(const void *, int))dlsym(process, "OPENSSL_sk_value");
    functions.public_key = (void *(*)(const void *))dlsym(process, "X509_get_X509_PUBKEY");
    functions.encode_public_key = (int (*)(const void *, unsigned char **))dlsym(process, "i2d_X509_PUBKEY");
    return functions;
}

/// The chain OpenSSL verified for the transfer's connection (`CURLINFO_TLS_SSL_PTR`, valid on a
/// reused connection too): its length, or -1 when there is none to read (not OpenSSL, no TLS, not
/// verified).
static inline int ccurl_verified_chain_count(CURL *handle, const ccurl_openssl_chain_functions *functions,
                                             const void **chain) {
    struct curl_tlssessioninfo *info = 0;
    *chain = 0;
    if (!functions->verified_chain || !functions->count || !functions->value || !functions->public_key
        || !functions->encode_public_key)
        return -1;
    if (curl_easy_getinfo(handle, CURLINFO_TLS_SSL_PTR, &info) != CURLE_OK || !info) return -1;
    if (info->backend != CURLSSLBACKEND_OPENSSL || !info->internals) return -1;
    const void *stack = functions->verified_chain(info->internals);
    if (!stack) return -1;
    *chain = stack;
    return functions->count(stack);
}

/// The DER SubjectPublicKeyInfo of certificate `index` of `chain` (leaf first) into `buffer`: its
/// length, or -1 when it does not fit or cannot be encoded.
static inline int ccurl_verified_chain_spki(const ccurl_openssl_chain_functions *functions, const void *chain,
                                            int index, unsigned char *buffer, int capacity) {
    const void *certificate = functions->value(chain, index);
    if (!certificate) return -1;
    const void *key = functions->public_key(certificate);
    if (!key) return -1;
    int length = functions->encode_public_key(key, 0);
    if (length <= 0 || length > capacity) return -1;
    unsigned char *cursor = buffer;
    return functions->encode_public_key(key, &cursor);
}

// MARK: - easy info

static inline CURLcode ccurl_easy_getinfo_socket(CURL *handle, curl_socket_t *socket) {
    return curl_easy_getinfo(handle, CURLINFO_ACTIVESOCKET, socket);
}

static inline CURLcode ccurl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode ccurl_easy_getinfo_off(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode ccurl_easy_getinfo_pointer(CURL *handle, CURLINFO info, void **value) {
    return curl_easy_getinfo(handle, info, value);
}

// MARK: - multi and share options

static inline CURLMcode ccurl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

static inline CURLSHcode ccurl_share_setopt_long(CURLSH *share, CURLSHoption option, long value) {
    return curl_share_setopt(share, option, value);
}

static inline CURLSHcode ccurl_share_setopt_pointer(CURLSH *share, CURLSHoption option, void *value) {
    return curl_share_setopt(share, option, value);
}

static inline CURLSHcode ccurl_share_setopt_lock(CURLSH *share, curl_lock_function lock, curl_unlock_function unlock) {
    CURLSHcode code = curl_share_setopt(share, CURLSHOPT_LOCKFUNC, lock);
    if (code != CURLSHE_OK) return code;
    return curl_share_setopt(share, CURLSHOPT_UNLOCKFUNC, unlock);
}

static inline CURLMcode ccurl_multi_setopt_pointer(CURLM *multi, CURLMoption option, void *value) {
    return curl_multi_setopt(multi, option, value);
}

static inline CURLMcode ccurl_multi_setopt_socket_callback(CURLM *multi, curl_socket_callback callback) {
    return curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, callback);
}

static inline CURLMcode ccurl_multi_setopt_timer_callback(CURLM *multi, curl_multi_timer_callback callback) {
    return curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, callback);
}

// MARK: - the socket poller of CourierCurl's engine (epoll on Linux, kqueue elsewhere)
//
// The engine thread waits in ccurl_poller_wait without holding its lock, so a thread that starts a
// transfer can register the transfer's socket (ccurl_poller_watch, from libcurl's socket
// callback) while it waits: epoll and kqueue both take changes from other threads during a wait.

/// A new poller, or -1.
static inline int ccurl_poller_create(void) {
#if defined(__linux__)
    return epoll_create1(EPOLL_CLOEXEC);
#else
    return kqueue();
#endif
}

/// Makes the socket `fd` watched for `what` (a CURL_POLL_* value; CURL_POLL_REMOVE stops
/// watching it). `known` says whether it is watched already. Returns 0 or -1.
static inline int ccurl_poller_watch(int poller, int fd, int what, int known) {
#if defined(__linux__)
    if (what == CURL_POLL_REMOVE) return epoll_ctl(poller, EPOLL_CTL_DEL, fd, NULL);
    struct epoll_event event = {0};
    event.events = ((what & CURL_POLL_IN) ? EPOLLIN : 0) | ((what & CURL_POLL_OUT) ? EPOLLOUT : 0);
    event.data.fd = fd;
    int result = epoll_ctl(poller, known ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &event);
    if (result != 0 && errno == EEXIST) result = epoll_ctl(poller, EPOLL_CTL_MOD, fd, &event);
    if (result != 0 && errno == ENOENT) result = epoll_ctl(poller, EPOLL_CTL_ADD, fd, &event);
    return result;
#else
    (void)known;
    struct kevent changes[2];
    int read = what != CURL_POLL_REMOVE && (what & CURL_POLL_IN);
    int write = what != CURL_POLL_REMOVE && (what & CURL_POLL_OUT);
    EV_SET(&changes[0], fd, EVFILT_READ, (read ? EV_ADD | EV_ENABLE : EV_DELETE) | EV_RECEIPT, 0, 0, NULL);
    EV_SET(&changes[1], fd, EVFILT_WRITE, (write ? EV_ADD | EV_ENABLE : EV_DELETE) | EV_RECEIPT, 0, 0, NULL);
    struct kevent results[2];
    // EV_RECEIPT: each change reports its own result (deleting a filter never added is ENOENT).
    return kevent(poller, changes, 2, results, 2, NULL) < 0 ? -1 : 0;
#endif
}

/// Waits up to `timeout_ms` (-1: no limit) for ready sockets; writes each one's descriptor and
/// CURL_CSELECT_* flags. Returns how many (0 on timeout or interruption).
static inline int ccurl_poller_wait(int poller, int *fds, int *flags, int capacity, int timeout_ms) {
    enum { maximum = 64 };
    if (capacity > maximum) capacity = maximum;
#if defined(__linux__)
    struct epoll_event events[maximum];
    int count = epoll_wait(poller, events, capacity, timeout_ms);
    for (int index = 0; index < count; index++) {
        uint32_t ready = events[index].events;
        fds[index] = events[index].data.fd;
        flags[index] = ((ready & EPOLLIN) ? CURL_CSELECT_IN : 0) | ((ready & EPOLLOUT) ? CURL_CSELECT_OUT : 0)
            | ((ready & (EPOLLERR | EPOLLHUP)) ? CURL_CSELECT_ERR : 0);
    }
#else
    struct kevent events[maximum];
    struct timespec timeout = {timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L};
    int count = kevent(poller, NULL, 0, events, capacity, timeout_ms < 0 ? NULL : &timeout);
    for (int index = 0; index < count; index++) {
        fds[index] = (int)events[index].ident;
        flags[index] = (events[index].filter == EVFILT_READ ? CURL_CSELECT_IN : 0)
            | (events[index].filter == EVFILT_WRITE ? CURL_CSELECT_OUT : 0)
            | ((events[index].flags & EV_ERROR) ? CURL_CSELECT_ERR : 0);
    }
#endif
    return count < 0 ? 0 : count;
}

/// A wake-up channel: `fds[0]` is watched by the poller, `fds[1]` written to wake it (on Linux
/// both are the same eventfd). Returns 0 or -1.
static inline int ccurl_waker_create(int fds[2]) {
#if defined(__linux__)
    int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    fds[0] = fd;
    fds[1] = fd;
    return fd < 0 ? -1 : 0;
#else
    if (pipe(fds) != 0) return -1;
    for (int index = 0; index < 2; index++) {
        fcntl(fds[index], F_SETFL, fcntl(fds[index], F_GETFL) | O_NONBLOCK);
        fcntl(fds[index], F_SETFD, FD_CLOEXEC);
    }
    return 0;
#endif
}

static inline void ccurl_waker_signal(int fd) {
    uint64_t one = 1;
    ssize_t written = write(fd, &one, sizeof one);
    (void)written;
}

static inline void ccurl_waker_drain(int fd) {
    uint64_t value[8];
    while (read(fd, value, sizeof value) > 0) {}
}

/// Milliseconds on the monotonic clock.
static inline int64_t ccurl_now_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

// MARK: - constants Swift does not import

static inline int ccurl_pause_continue(void) { return CURLPAUSE_CONT; }
static inline int ccurl_pause_receive(void) { return CURLPAUSE_RECV; }
static inline int ccurl_pause_send(void) { return CURLPAUSE_SEND; }
static inline size_t ccurl_writefunc_pause(void) { return CURL_WRITEFUNC_PAUSE; }
static inline size_t ccurl_readfunc_pause(void) { return CURL_READFUNC_PAUSE; }
static inline size_t ccurl_readfunc_abort(void) { return CURL_READFUNC_ABORT; }

static inline curl_socket_t ccurl_socket_timeout(void) { return CURL_SOCKET_TIMEOUT; }

/// The CURLcode of a finished transfer in a CURLMSG_DONE message (a union member in C).
static inline CURLcode ccurl_msg_result(const CURLMsg *message) { return message->data.result; }

#endif
