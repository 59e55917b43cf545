import Foundation

/// The file format of one ``DiskCacheStorage`` entry:
///
/// ```
/// "CCE3"                 4 bytes, magic and format version
/// metadata length        4 bytes, big-endian UInt32
/// metadata               JSON (key, variant, status, headers, times, body length and checksum)
/// body                   raw bytes
/// metadata checksum      8 bytes, big-endian FNV-1a 64 of the magic, the length and the metadata
/// ```
/// A file whose size differs from what its metadata announces (truncated by a crash or a full
/// disk), or whose metadata or body checksum does not match, is rejected, and the storage deletes
/// it: a damaged status or header field is never served. Files of earlier formats are rejected
/// too: `CCE1` (no metadata checksum) and `CCE2`, whose entries did not record a request's own
/// `Authorization` (``Vary/credentialField``), so that one user's answer could not be told from an
/// anonymous request's, and whose varying credential fields were kept as sent.
enum DiskEntryCodec {
    static let magic = Array("CCE3".utf8)
    static let prefixLength = 8
    /// The metadata checksum after the body.
    static let trailerLength = 8
    /// Metadata larger than this is treated as corruption (headers are small).
    static let maxMetadataLength = 1 << 20

    struct Metadata: Codable, Sendable {
        var key: CacheKey
        var variant: String
        var statusCode: Int
        var headers: [[String]]
        var url: String?
        var requestTime: Double
        var responseTime: Double
        var varying: [String: String?]
        var bodyLength: Int
        var bodyChecksum: UInt64
    }

    enum Failure: Error { case corrupt }

    /// The bytes of a file holding `response` under `key`.
    /// - Throws: `EncodingError` (not expected for these plain types).
    static func encode(_ response: CachedResponse, key: CacheKey) throws -> Data {
        let metadata = Metadata(
            key: key, variant: response.variantID, statusCode: response.statusCode,
            headers: response.headers.fields.map { [$0.name, $0.value] },
            url: response.url?.absoluteString,
            requestTime: response.requestTime.timeIntervalSinceReferenceDate,
            responseTime: response.responseTime.timeIntervalSinceReferenceDate,
            varying: response.varyingRequestHeaders,
            bodyLength: response.body.count,
            bodyChecksum: StableHash.fnv1a64(response.body))
        let json = try JSONEncoder().encode(metadata)
        var data = Data(capacity: prefixLength + json.count + response.body.count)
        data.append(contentsOf: magic)
        let length = UInt32(json.count)
        data.append(contentsOf: [
            UInt8(length >> 24), UInt8(length >> 16 & 0xff), UInt8(length >> 8 & 0xff), UInt8(length & 0xff),
        ])
        data.append(json)
        let checksum = StableHash.fnv1a64(data)
        data.append(response.body)
        data.append(contentsOf: (0..<8).reversed().map { UInt8(truncatingIfNeeded: checksum >> ($0 * 8)) })
        return data
    }

    /// The metadata checksum stored in `trailer` (8 bytes, big-endian).
    private static func storedChecksum(_ trailer: some Collection<UInt8>) -> UInt64 {
        trailer.reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Reads the metadata from the first bytes of a file, checks it against the checksum at the
    /// file's end and the announced size against `fileSize`, without reading the body.
    /// - Throws: ``Failure/corrupt`` when the prefix or metadata is invalid or damaged, or the size
    ///   is wrong.
    static func decodeMetadata(from handle: FileHandle, fileSize: Int) throws -> Metadata {
        guard let prefix = try handle.read(upToCount: prefixLength), prefix.count == prefixLength,
            Array(prefix.prefix(4)) == magic
        else { throw Failure.corrupt }
        let length = prefix.dropFirst(4).reduce(0) { $0 << 8 | Int($1) }
        guard length > 0, length <= maxMetadataLength,
            let json = try handle.read(upToCount: length), json.count == length
        else { throw Failure.corrupt }
        let metadata = try decodeJSON(json)
        // Bound bodyLength by the file size first: a corrupt value near Int.max must not overflow.
        guard metadata.bodyLength >= 0, metadata.bodyLength <= fileSize,
            fileSize == prefixLength + length + metadata.bodyLength + trailerLength
        else { throw Failure.corrupt }
        try handle.seek(toOffset: UInt64(fileSize - trailerLength))
        guard let trailer = try handle.read(upToCount: trailerLength), trailer.count == trailerLength,
            storedChecksum(trailer) == StableHash.fnv1a64(prefix + json)
        else { throw Failure.corrupt }
        return metadata
    }

    /// Decodes a whole file.
    /// - Throws: ``Failure/corrupt`` when anything is inconsistent.
    static func decode(_ data: Data) throws -> (CacheKey, CachedResponse) {
        guard data.count >= prefixLength, Array(data.prefix(4)) == magic else { throw Failure.corrupt }
        let start = data.startIndex
        let length = data[(start + 4)..<(start + 8)].reduce(0) { $0 << 8 | Int($1) }
        guard length > 0, length <= maxMetadataLength, data.count >= prefixLength + length + trailerLength else {
            throw Failure.corrupt
        }
        let bodyStart = start + prefixLength + length
        let metadata = try decodeJSON(data[(start + 8)..<bodyStart])
        guard metadata.bodyLength >= 0, metadata.bodyLength <= data.count,
            data.count == prefixLength + length + metadata.bodyLength + trailerLength,
            storedChecksum(data.suffix(trailerLength)) == StableHash.fnv1a64(data[start..<bodyStart])
        else { throw Failure.corrupt }
        let body = Data(data[bodyStart..<(data.endIndex - trailerLength)])
        guard StableHash.fnv1a64(body) == metadata.bodyChecksum else { throw Failure.corrupt }
        var headers = HTTPHeaders()
        for pair in metadata.headers {
            guard pair.count == 2 else { throw Failure.corrupt }
            headers.add(pair[0], pair[1])
        }
        let response = CachedResponse(
            statusCode: metadata.statusCode, headers: headers, body: body,
            url: metadata.url.flatMap(URL.init(string:)),
            requestTime: Date(timeIntervalSinceReferenceDate: metadata.requestTime),
            responseTime: Date(timeIntervalSinceReferenceDate: metadata.responseTime),
            varyingRequestHeaders: metadata.varying)
        guard response.variantID == metadata.variant else { throw Failure.corrupt }
        return (metadata.key, response)
    }

    private static func decodeJSON(_ data: Data) throws -> Metadata {
        do { return try JSONDecoder().decode(Metadata.self, from: data) } catch { throw Failure.corrupt }
    }
}
