import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import CourierCurl

/// `CurlUpload` hands libcurl a request body from memory: every `Data` shape reads from its start.
@Suite struct UploadBodyTests {
    /// Reads `upload` to its end in reads of at most `chunk` bytes.
    static func readAll(_ upload: CurlUpload, chunk: Int = 4) -> [UInt8] {
        var bytes: [UInt8] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 1)
        defer { buffer.deallocate() }
        while case .bytes(let count) = upload.read(into: buffer, onReadable: {}), count > 0 {
            bytes += buffer.prefix(count)
        }
        return bytes
    }

    @Test func aSliceIsSentFromItsFirstByteAndRewindsToIt() {
        let whole = Data("0123456789".utf8) + Data("hello slice".utf8)
        let upload = CurlUpload(data: whole[10...])  // indices 10..<21
        #expect(upload.length == 11)
        #expect(Self.readAll(upload) == Array("hello slice".utf8))
        #expect(upload.seek(to: 6))
        #expect(Self.readAll(upload) == Array("slice".utf8))
        #expect(!upload.seek(to: 12))
    }
}
