import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `multipart/form-data` body (RFC 7578): fields and files, from memory or from file URLs.
///
/// ```swift
/// var form = MultipartForm()
/// try form.addField(named: "title", value: "Holiday")
/// try form.addFile(named: "photo", fileURL: photoURL, contentType: "image/jpeg")
/// let request = Request<Photo>.post("/photos", body: .multipart(form))
/// ```
///
/// The encoding follows RFC 7578 and RFC 2046 §5.1.1 exactly:
/// - Names and filenames are UTF-8 inside quoted strings with `"` and `\` escaped
///   (RFC 9110 §5.6.4); CR, LF and other control characters are refused with
///   ``MultipartFormError/invalidCharacter(what:value:)``; no `filename*` (RFC 7578 §4.2).
/// - The boundary is random (`courier-` and 40 letters and digits) and never occurs in an
///   in-memory part: adding a part that contains it picks a new one. File parts are not read in
///   advance; the chance that a file contains the delimiter is below `n × 2⁻²³⁸` for `n` bytes.
/// - The body starts with `--boundary` CRLF, every later delimiter is preceded by CRLF, and it
///   ends with the close delimiter `--boundary--` followed by CRLF.
/// - ``contentLength`` is known: memory parts by their size, files by their size when added (a
///   file whose size changed by the time it is sent fails the send with
///   ``MultipartFormError/fileChanged(path:expected:actual:)`` rather than sending a wrong length).
///
/// Sending (``Courier/RequestBody/multipart(_:memoryThreshold:)``): a small form of in-memory parts goes
/// as `Data`; any file part, or a form larger than the threshold, is streamed part by part from
/// its sources, never assembled in memory, and re-read from the start for a retry or redirect.
public struct MultipartForm: Sendable {
    /// Forms of in-memory parts up to this many bytes (10 MiB) are sent as one `Data`.
    public static let defaultMemoryThreshold = 10 << 20

    /// The boundary (RFC 2046 §5.1.1), 1–70 characters.
    public private(set) var boundary: String
    private let makeBoundary: (@Sendable () -> String)?
    private(set) var parts: [Part] = []

    struct Part: Sendable {
        var header: Data
        var content: Content
    }

    enum Content: Sendable {
        case data(Data)
        case file(URL, length: Int64)

        var length: Int64 {
            switch self {
            case .data(let data): return Int64(data.count)
            case .file(_, let length): return length
            }
        }
    }

    /// An empty form with a random boundary.
    public init() {
        self.init(boundaryGenerator: MultipartBoundary.random)
    }

    /// An empty form with the caller's boundary.
    ///
    /// - Throws: ``MultipartFormError/invalidBoundary(_:)`` unless it is 1–70 RFC 2046 `bchars`
    ///   not ending in a space.
    public init(boundary: String) throws {
        guard MultipartBoundary.isValid(boundary) else { throw MultipartFormError.invalidBoundary(boundary) }
        self.boundary = boundary
        self.makeBoundary = nil
    }

    /// A form whose random boundaries come from `boundaryGenerator` (tests).
    init(boundaryGenerator: @escaping @Sendable () -> String) {
        self.boundary = boundaryGenerator()
        self.makeBoundary = boundaryGenerator
    }

    /// `multipart/form-data; boundary=…` (the boundary quoted when it is not a token).
    public var contentType: String {
        // RFC 9110 §5.6.2 tchar; bchars such as ":" or "=" need a quoted string.
        let tchars = Set("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".unicodeScalars)
        let token = boundary.unicodeScalars.allSatisfy { tchars.contains($0) }
        return "multipart/form-data; boundary=" + (token ? boundary : "\"\(boundary)\"")
    }

    /// The body's length in bytes.
    public var contentLength: Int64 {
        let delimiters = parts.indices.reduce(Int64(0)) { sum, index in sum + Int64(delimiter(first: index == 0).count) }
        let content = parts.reduce(Int64(0)) { $0 + Int64($1.header.count) + $1.content.length }
        return delimiters + content + Int64(closeDelimiter.count)
    }

    /// Whether a part is a file (read when the body is sent).
    var hasFiles: Bool { parts.contains { if case .file = $0.content { return true } else { return false } } }

    // MARK: Adding parts

    /// Adds a text field (no `Content-Type`: `text/plain` by RFC 7578 §4.4), UTF-8.
    ///
    /// - Throws: ``MultipartFormError/invalidCharacter(what:value:)`` for a control character in
    ///   `name`; ``MultipartFormError/boundaryInContent(_:)`` when a boundary given by the caller
    ///   occurs in `value`.
    public mutating func addField(named name: String, value: String) throws {
        try add(
            Part(header: MultipartHeaders.block(name: name, filename: nil, contentType: nil), content: .data(Data(value.utf8))))
    }

    /// Adds a file part from memory.
    ///
    /// - Parameters:
    ///   - name: The form field name.
    ///   - data: The file's bytes.
    ///   - filename: The name the server sees (UTF-8, sent as is in the quoted `filename`).
    ///   - contentType: The part's media type, e.g. `image/jpeg`.
    /// - Throws: See ``addField(named:value:)``.
    public mutating func addFile(
        named name: String, data: Data, filename: String, contentType: String = "application/octet-stream"
    ) throws {
        try add(
            Part(header: MultipartHeaders.block(name: name, filename: filename, contentType: contentType), content: .data(data)))
    }

    /// Adds a file part read from disk when the body is sent (constant memory).
    ///
    /// - Parameters:
    ///   - name: The form field name.
    ///   - fileURL: A `file:` URL; its size now is the part's length.
    ///   - filename: The name the server sees; the URL's last path component by default.
    ///   - contentType: The part's media type.
    /// - Throws: ``MultipartFormError/unreadableFile(path:)`` when the file's size cannot be
    ///   read; see ``addField(named:value:)`` for the others.
    public mutating func addFile(
        named name: String, fileURL: URL, filename: String? = nil, contentType: String = "application/octet-stream"
    ) throws {
        guard let size = FileSize.of(fileURL) else { throw MultipartFormError.unreadableFile(path: fileURL.path) }
        let header = try MultipartHeaders.block(
            name: name, filename: filename ?? fileURL.lastPathComponent, contentType: contentType)
        try add(Part(header: header, content: .file(fileURL, length: size)))
    }

    private mutating func add(_ part: Part) throws {
        parts.append(part)
        guard collides(boundary) else { return }
        guard let makeBoundary else {
            parts.removeLast()
            throw MultipartFormError.boundaryInContent(boundary)
        }
        // Bounded: with 238 random bits a second collision is practically impossible.
        for _ in 0..<16 {
            let candidate = makeBoundary()
            if !collides(candidate) {
                boundary = candidate
                return
            }
        }
        parts.removeLast()
        throw MultipartFormError.boundaryInContent(boundary)
    }

    private func collides(_ boundary: String) -> Bool {
        parts.contains { part in
            if MultipartBoundary.occurs(boundary, in: part.header) { return true }
            if case .data(let data) = part.content { return MultipartBoundary.occurs(boundary, in: data) }
            return false
        }
    }

    // MARK: Encoding

    private func delimiter(first: Bool) -> Data { Data(((first ? "" : "\r\n") + "--\(boundary)\r\n").utf8) }
    private var closeDelimiter: Data { Data((parts.isEmpty ? "--\(boundary)--\r\n" : "\r\n--\(boundary)--\r\n").utf8) }

    /// The body as consecutive pieces, adjacent in-memory bytes merged.
    var segments: [MultipartSegment] {
        var out: [MultipartSegment] = []
        var pending = Data()
        for (index, part) in parts.enumerated() {
            pending.append(delimiter(first: index == 0))
            pending.append(part.header)
            switch part.content {
            case .data(let data): pending.append(data)
            case .file(let url, let length):
                out.append(.bytes(pending))
                pending = Data()
                out.append(.file(url, length: length))
            }
        }
        pending.append(closeDelimiter)
        out.append(.bytes(pending))
        return out
    }

    /// The whole body in memory, files read now. For small forms and tests; large forms are
    /// streamed by ``Courier/RequestBody/multipart(_:memoryThreshold:)``.
    ///
    /// - Throws: ``MultipartFormError/unreadableFile(path:)``,
    ///   ``MultipartFormError/fileChanged(path:expected:actual:)``.
    public func encodedData() throws -> Data {
        var data = Data()
        try MultipartSegmentReader(segments).forEachChunk { data.append($0) }
        return data
    }

    /// Writes the body to `url` (for transports that upload only from files, such as background
    /// sessions), replacing what is there, in a file readable by its owner alone (mode 0600: the
    /// fields may hold what the user typed). A failed write removes the partial file.
    ///
    /// - Throws: The file system's error, or the errors of ``encodedData()``.
    public func writeBody(to url: URL) throws {
        let privateFile: [FileAttributeKey: Any] = [.posixPermissions: Int(AtomicFile.fileMode)]
        guard FileManager.default.createFile(atPath: url.path, contents: nil, attributes: privateFile) else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: url.path])
        }
        do {
            let handle = try FileHandle(forWritingTo: url)
            do {
                try MultipartSegmentReader(segments).forEachChunk { try handle.write(contentsOf: $0) }
            } catch {
                _ = Result { try handle.close() }  // the write's failure is the one to report
                throw error
            }
            // A close can report a write the system deferred (a full disk): the file is not whole.
            try handle.close()
        } catch {
            try? FileManager.default.removeItem(at: url)
            throw error
        }
    }

    /// A stream source for one send: reads the parts in order, files opened lazily.
    func makeStream() -> InputStream {
        SourceInputStream.make(MultipartSegmentReader(segments))
    }
}

extension RequestBody {
    /// A `multipart/form-data` body (see ``MultipartForm``): in memory when every part is and the
    /// body is at most `memoryThreshold` bytes, otherwise streamed part by part from its sources
    /// with a `Content-Length`, re-read from the start for every send (retries, 307/308).
    ///
    /// On Linux, `URLSessionTransport` sends a streamed body chunked, without the
    /// `Content-Length` (FoundationNetworking always does); `CurlTransport` sends the length.
    /// A server that requires one (411, e.g. a presigned object-storage upload) needs
    /// `CurlTransport` there, or a body under `memoryThreshold` with no file parts.
    ///
    /// - Parameters:
    ///   - form: The form.
    ///   - memoryThreshold: The largest body in bytes sent from memory; default 10 MiB.
    public static func multipart(
        _ form: MultipartForm, memoryThreshold: Int = MultipartForm.defaultMemoryThreshold
    ) -> RequestBody {
        if !form.hasFiles, form.contentLength <= Int64(memoryThreshold), let data = try? form.encodedData() {
            return .data(data, contentType: form.contentType)
        }
        return .stream(.factory(length: Int(form.contentLength)) { form.makeStream() }, contentType: form.contentType)
    }
}
