import Courier
import Foundation

/// A file in an `Encodable` model sent as `multipart/form-data` (``MultipartFormEncoder``): bytes
/// from memory or a file read from disk when the body is sent, with the file name and media type
/// the server sees.
///
/// ```swift
/// struct NewPhoto: Encodable {
///     var title: String
///     var image: MultipartFile      // part "image"; filename and Content-Type from the value
/// }
/// let photo = NewPhoto(title: "Holiday", image: MultipartFile(fileURL: photoURL, contentType: "image/jpeg"))
/// ```
public struct MultipartFile: Encodable, Sendable, Hashable {
    enum Source: Sendable, Hashable {
        case data(Data)
        case file(URL)
    }

    let source: Source
    /// The `filename` parameter of the part (RFC 7578 §4.2).
    public var filename: String
    /// The part's media type, e.g. `image/jpeg`.
    public var contentType: String

    /// A file from memory.
    ///
    /// - Parameters:
    ///   - data: The file's bytes.
    ///   - filename: The name the server sees.
    ///   - contentType: The part's media type; `application/octet-stream` by default.
    public init(data: Data, filename: String, contentType: String = "application/octet-stream") {
        source = .data(data)
        self.filename = filename
        self.contentType = contentType
    }

    /// A file read from disk when the body is sent, in constant memory; its size is taken when the
    /// model is encoded.
    ///
    /// - Parameters:
    ///   - fileURL: A `file:` URL.
    ///   - filename: The name the server sees; the URL's last path component by default.
    ///   - contentType: The part's media type; `application/octet-stream` by default.
    public init(fileURL: URL, filename: String? = nil, contentType: String = "application/octet-stream") {
        source = .file(fileURL)
        self.filename = filename ?? fileURL.lastPathComponent
        self.contentType = contentType
    }

    /// A file has no meaning outside a multipart form: encoding it with any encoder other than
    /// ``MultipartFormEncoder`` (e.g. `JSONEncoder`) fails.
    ///
    /// - Throws: `EncodingError.invalidValue`.
    public func encode(to encoder: any Encoder) throws {
        throw EncodingError.invalidValue(
            filename,
            EncodingError.Context(
                codingPath: encoder.codingPath,
                debugDescription: "A MultipartFile is encoded only by MultipartFormEncoder (a multipart/form-data body)"))
    }
}
