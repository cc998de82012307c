import Foundation

/// The user's folders as the XDG base directory specification names them: `$XDG_CONFIG_HOME`,
/// `$XDG_DATA_HOME`, `$XDG_CACHE_HOME`, each ignored unless absolute, else a folder of `$HOME`.
public enum UserFolders {
    /// The folder `variable` names (`XDG_CONFIG_HOME`) when it is absolute, else `relative`
    /// (`.config`) in `$HOME`; without an absolute `$HOME`, in the account's home when
    /// `accountHome`, else nil.
    public static func base(_ variable: String, default relative: String, accountHome: Bool = true,
                            environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let set = environment[variable], set.hasPrefix("/") { return set }
        if let home = environment["HOME"], home.hasPrefix("/") { return home + "/" + relative }
        return accountHome ? NSHomeDirectory() + "/" + relative : nil
    }
}
