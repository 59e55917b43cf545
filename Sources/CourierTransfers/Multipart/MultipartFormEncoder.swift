import Courier
import Foundation

/// Encodes an `Encodable` model as a ``MultipartForm`` (`multipart/form-data`, RFC 7578): one part
/// per value, named from the model's `CodingKeys`, in the order the model encodes them; a
/// ``MultipartFile`` becomes a file part.
///
/// ```swift
/// struct Profile: Encodable {
///     struct User: Encodable { var name: String }
///     var user: User              // user[name]=Ann
///     var tags: [String]          // tags[]=a, tags[]=b
///     var avatar: MultipartFile   // a file part named "avatar"
/// }
/// let profile = Profile(
///     user: .init(name: "Ann"), tags: ["a", "b"], avatar: MultipartFile(fileURL: photoURL, contentType: "image/jpeg"))
/// let form = try MultipartFormEncoder().encode(profile)
/// let upload = client.upload(Request<Void>.post("/profile", body: .multipart(form)))
/// ```
///
/// Names follow the Rails / PHP bracket convention that Rack, Rails, PHP, Laravel, Express
/// (`qs`) and most form parsers read:
/// - a nested object's member: `user[name]`, deeper `user[address][city]`;
/// - an array element: `tags[]` for every element, in order; an array of objects repeats its
///   members under `items[][name]`, `items[][price]` (Rails); an array of files `photos[]`.
///
/// Values: strings as they are; `Bool` as `true`/`false`; numbers in Swift's shortest
/// round-tripping form; `Date` as RFC 3339 UTC (`2026-05-25T22:46:27Z`; a `CodedDate` property
/// picks another format); `URL` as its absolute string; `Data` in Base64 (use a ``MultipartFile``
/// to send bytes as a file); `nil` leaves the part out; an empty array or object sends nothing.
///
/// Files from disk are not read here: the form streams them when it is sent, in constant memory,
/// with a known `Content-Length`; send it with `APIClient`'s `upload` for upload progress.
public struct MultipartFormEncoder: Sendable {
    /// An encoder.
    public init() {}

    /// Encodes `value`, which must encode a keyed container (a struct or class with properties,
    /// or a dictionary keyed by strings).
    ///
    /// - Parameters:
    ///   - value: The model.
    ///   - form: The form to add the parts to; a new one with a random boundary by default.
    /// - Returns: The form with a part per value.
    /// - Throws: `EncodingError.invalidValue` for a top-level value that is not keyed, a non-finite
    ///   number, or a ``MultipartFile`` under no name; ``MultipartFormError`` for a name with a
    ///   control character or a file whose size cannot be read.
    public func encode<T: Encodable>(_ value: T, into form: MultipartForm = MultipartForm()) throws -> MultipartForm {
        let sink = MultipartPartSink()
        try MultipartValueEncoder(name: "", codingPath: [], sink: sink).encodeValue(value)
        var form = form
        for part in sink.parts {
            guard !part.name.isEmpty, !part.name.hasPrefix("[") else {
                throw EncodingError.invalidValue(
                    value,
                    EncodingError.Context(
                        codingPath: [],
                        debugDescription: "A multipart form is encoded from a keyed value (a struct or a [String: …] dictionary)")
                )
            }
            switch part.content {
            case .text(let text): try form.addField(named: part.name, value: text)
            case .file(let file):
                switch file.source {
                case .data(let data):
                    try form.addFile(named: part.name, data: data, filename: file.filename, contentType: file.contentType)
                case .file(let url):
                    try form.addFile(named: part.name, fileURL: url, filename: file.filename, contentType: file.contentType)
                }
            }
        }
        return form
    }
}

extension RequestBody {
    /// A `multipart/form-data` body encoded from `value` by ``MultipartFormEncoder`` (see there for
    /// names and values), sent like ``multipart(_:memoryThreshold:)``.
    ///
    /// - Throws: As ``MultipartFormEncoder/encode(_:into:)``.
    public static func multipart<T: Encodable>(
        encoding value: T, encoder: MultipartFormEncoder = MultipartFormEncoder()
    ) throws
        -> RequestBody
    {
        .multipart(try encoder.encode(value))
    }
}
