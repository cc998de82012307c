extension Int {
    /// The count with its noun, singular for one: `1 object`, `2 objects`, `0 types`.
    public func counting(_ noun: String, plural: String? = nil) -> String {
        "\(self) \(self == 1 ? noun : plural ?? noun + "s")"
    }
}
