// CCurl: libcurl for Courier's opt-in modules (CourierRealtime's Linux WebSocket byte stream and
// CourierCurl's HTTP transport). Swift cannot call C variadic functions, so the
// curl_easy_setopt/getinfo, curl_multi_setopt and curl_share_setopt shapes Courier needs are
// wrapped here as typed inline functions, and the macros Swift does not import as constants
// (shifted or composed values) are spelled out as functions.
#ifndef COURIER_CCURL_SHIM_H
#define COURIER_CCURL_SHIM_H

#include <curl/curl.h>

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

static inline CURLcode ccurl_easy_setopt_xferinfo_callback(CURL *handle, curl_xferinfo_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback);
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

// MARK: - constants Swift does not import

static inline int ccurl_pause_continue(void) { return CURLPAUSE_CONT; }
static inline int ccurl_pause_receive(void) { return CURLPAUSE_RECV; }
static inline int ccurl_pause_send(void) { return CURLPAUSE_SEND; }
static inline size_t ccurl_writefunc_pause(void) { return CURL_WRITEFUNC_PAUSE; }
static inline size_t ccurl_readfunc_pause(void) { return CURL_READFUNC_PAUSE; }
static inline size_t ccurl_readfunc_abort(void) { return CURL_READFUNC_ABORT; }

/// The CURLcode of a finished transfer in a CURLMSG_DONE message (a union member in C).
static inline CURLcode ccurl_msg_result(const CURLMsg *message) { return message->data.result; }

#endif
