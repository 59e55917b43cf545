import Foundation

extension Endpoint {
    /// What logs, metrics, events and recorded exchanges name the call by: ``pathTemplate``, or
    /// else ``path`` without what may carry a secret.
    ///
    /// ``path`` may be an absolute URL (``APIClient/get(_:query:headers:policy:)-(URL,_,_,_)``: a
    /// pre-signed link, a `Location`) whose query holds a signature or a token, or whose user info
    /// holds a password; those fields are written unredacted wherever the template goes. The
    /// default keeps the scheme, host, port and path of an absolute URL, and drops the query and
    /// fragment of any path.
    package var loggedPathTemplate: String {
        pathTemplate ?? Self.defaultPathTemplate(for: path)
    }

    /// `path` without user info, query and fragment (see ``loggedPathTemplate``).
    package static func defaultPathTemplate(for path: String) -> String {
        if path.contains("://"), let components = URLComponents(string: path), let scheme = components.scheme,
            let host = components.percentEncodedHost
        {
            let port = components.port.map { ":\($0)" } ?? ""
            return "\(scheme)://\(host)\(port)\(components.percentEncodedPath)"
        }
        guard let end = path.firstIndex(where: { $0 == "?" || $0 == "#" }) else { return path }
        return String(path[..<end])
    }
}
