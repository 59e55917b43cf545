#if canImport(CCurl)
import CCurl
import Courier

/// Phase timings from libcurl's `CURLINFO_*_TIME_T` values (microseconds, each measured from the
/// start of the transfer) in the shape URLSession's task metrics give on Apple platforms.
enum CurlTimings {
    /// Reads the finished (or failed after its head) transfer on `handle`.
    static func read(from handle: UnsafeMutableRawPointer) -> TaskTimings {
        func micros(_ info: CURLINFO) -> Int64? {
            var value: curl_off_t = 0
            guard ccurl_easy_getinfo_off(handle, info, &value) == CURLE_OK, value > 0 else { return nil }
            return Int64(value)
        }
        func count(_ info: CURLINFO) -> Int64? {
            var value: curl_off_t = 0
            guard ccurl_easy_getinfo_off(handle, info, &value) == CURLE_OK, value >= 0 else { return nil }
            return Int64(value)
        }
        func long(_ info: CURLINFO) -> Int? {
            var value = 0
            guard ccurl_easy_getinfo_long(handle, info, &value) == CURLE_OK else { return nil }
            return value
        }
        let lookup = micros(CURLINFO_NAMELOOKUP_TIME_T)
        let connected = micros(CURLINFO_CONNECT_TIME_T)
        let secured = micros(CURLINFO_APPCONNECT_TIME_T)
        let pretransfer = micros(CURLINFO_PRETRANSFER_TIME_T)
        let firstByte = micros(CURLINFO_STARTTRANSFER_TIME_T)
        let total = micros(CURLINFO_TOTAL_TIME_T)
        // A transfer on a reused connection opened no new one.
        let reused = long(CURLINFO_NUM_CONNECTS).map { $0 == 0 }

        func span(_ start: Int64?, _ end: Int64?) -> Duration? {
            guard let end, end >= (start ?? 0) else { return nil }
            return .microseconds(end - (start ?? 0))
        }
        var timings = TaskTimings(
            domainLookup: reused == true ? nil : span(0, lookup),
            // URLSession and HAR count the TLS handshake inside connect.
            connect: reused == true ? nil : span(lookup, secured ?? connected),
            secureConnection: reused == true || secured == nil ? nil : span(connected, secured),
            waiting: span(pretransfer, firstByte),
            timeToFirstByte: span(0, firstByte),
            responseReceive: span(firstByte, total),
            total: span(0, total),
            isReusedConnection: reused,
            networkProtocol: long(CURLINFO_HTTP_VERSION).flatMap(protocolName))
        timings.requestHeaderBytesSent = long(CURLINFO_REQUEST_SIZE).map(Int64.init)
        timings.requestBodyBytesSent = count(CURLINFO_SIZE_UPLOAD_T)
        timings.responseHeaderBytesReceived = long(CURLINFO_HEADER_SIZE).map(Int64.init)
        timings.responseBodyBytesReceived = count(CURLINFO_SIZE_DOWNLOAD_T)
        return timings
    }

    /// The ALPN-style name of a `CURLINFO_HTTP_VERSION` value: `http/1.0`, `http/1.1`, `h2`, `h3`.
    static func protocolName(_ version: Int) -> String? {
        switch version {
        case Int(CURL_HTTP_VERSION_1_0): return "http/1.0"
        case Int(CURL_HTTP_VERSION_1_1): return "http/1.1"
        case Int(CURL_HTTP_VERSION_2_0): return "h2"
        case Int(CURL_HTTP_VERSION_3): return "h3"
        default: return nil
        }
    }
}
#endif
