/// What an object is called on screen beside its `Type #key`: one rule for every store.
extension TypeTable {
    /// The attributes that name an object (``captionAttributes``): one called like a name
    /// (`name`, `title`, `label`, …, any case, `_` ignored), else a person's first and last name
    /// together, else one whose name ends like one (`ArtistName`, `productTitle`); empty when
    /// none does (the caption is then the first non-empty text).
    static func captionAttributes(_ attributes: [AttributeColumn]) -> [Int] {
        func plain(_ s: String) -> String { s.lowercased().replacingOccurrences(of: "_", with: "") }
        let names = attributes.map { plain($0.name) }
        for wanted in Self.captionNames {
            if let i = names.firstIndex(of: wanted) { return [i] }
        }
        if let first = names.firstIndex(of: "firstname"), let last = names.firstIndex(of: "lastname") { return [first, last] }
        if let i = names.firstIndex(where: { n in Self.captionSuffixes.contains { n.hasSuffix($0) } }) { return [i] }
        return []
    }

    /// Names that say an attribute names its object, best first.
    static let captionNames = ["name", "title", "label", "displayname", "fullname", "username", "login", "nickname", "subject",
                               "caption", "heading", "headline", "email", "code", "summary", "description", "text"]
    static let captionSuffixes = ["name", "title", "label"]

    /// The caption of the object on `row`: its naming attributes' text joined by spaces, else its
    /// first non-empty text; nil when it has none.
    public func caption(row: Int) -> String? {
        func text(_ a: Int) -> String? {
            if case .string(let s) = value(row: row, attribute: a), !s.isEmpty { return s }
            return nil
        }
        let named = captionAttributes.compactMap(text)
        if !named.isEmpty { return named.joined(separator: " ") }
        return attributes.indices.lazy.compactMap(text).first
    }
}
