#if canImport(CCurl)
import CCurl
import Foundation

/// The C callbacks libcurl calls under the engine's lock. `userdata` is the ``CurlTransfer``
/// (unretained: the engine's table of running transfers keeps it alive while libcurl may call).
enum CurlCallbacks {
    static let header: ccurl_data_callback = { buffer, size, count, userdata in
        guard let buffer, let userdata else { return 0 }
        let length = size * count
        let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
        buffer.withMemoryRebound(to: UInt8.self, capacity: length) {
            transfer.receiveHeaderLine(UnsafeBufferPointer(start: $0, count: length))
        }
        return length
    }

    static let write: ccurl_data_callback = { buffer, size, count, userdata in
        guard let userdata else { return 0 }
        let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
        return transfer.receiveBody(UnsafeRawBufferPointer(start: buffer, count: size * count))
    }

    static let read: ccurl_data_callback = { buffer, size, count, userdata in
        guard let userdata else { return ccurl_readfunc_abort() }
        let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
        return transfer.sendBody(into: UnsafeMutableRawBufferPointer(start: buffer, count: size * count))
    }

    static let seek: curl_seek_callback = { userdata, offset, origin in
        guard let userdata, origin == SEEK_SET else { return CURL_SEEKFUNC_CANTSEEK }
        let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
        return (transfer.upload?.seek(to: Int(offset)) ?? false) ? CURL_SEEKFUNC_OK : CURL_SEEKFUNC_CANTSEEK
    }
}
#endif
