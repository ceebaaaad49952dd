// Console front end; filled in by the extension issue.
export {};
