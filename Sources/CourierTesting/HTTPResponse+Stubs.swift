import Foundation
import Courier

extension HTTPResponse {
    /// A JSON response from a string literal: `.json(#"{"id": 1}"#)`.
    ///
    /// - Parameters:
    ///   - text: The body, sent as UTF-8.
    ///   - status: The status code; 200 by default.
    ///   - headers: Extra header fields; `Content-Type: application/json` is added unless present.
    public static func json(_ text: String, status: Int = 200, headers: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        var headers = headers
        if !headers.contains("Content-Type") { headers.replace("Content-Type", with: "application/json") }
        return HTTPResponse(statusCode: status, headers: headers, body: Data(text.utf8))
    }

    /// A JSON response encoding `value` with the client's default encoder
    /// (`APIClient.makeEncoder()`: ISO 8601 dates, sorted keys), so the default decoder reads it
    /// back as it reads a server's JSON.
    /// - Throws: `EncodingError` when `value` cannot be encoded.
    public static func json<T: Encodable>(
        encoding value: T, status: Int = 200, headers: HTTPHeaders = HTTPHeaders()
    ) throws -> HTTPResponse {
        let encoder = APIClient.makeEncoder()
        var headers = headers
        if !headers.contains("Content-Type") { headers.replace("Content-Type", with: "application/json") }
        return HTTPResponse(statusCode: status, headers: headers, body: try encoder.encode(value))
    }

    /// A response with a status and an optional text body of the given content type.
    public static func status(
        _ status: Int, body: String = "", contentType: String? = nil, headers: HTTPHeaders = HTTPHeaders()
    ) -> HTTPResponse {
        var headers = headers
        if let contentType { headers.replace("Content-Type", with: contentType) }
        return HTTPResponse(statusCode: status, headers: headers, body: Data(body.utf8))
    }
}
