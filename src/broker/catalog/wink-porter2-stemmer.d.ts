// The package ships no types: one function, an English word → its Porter2 stem.
declare module 'wink-porter2-stemmer' {
  export default function stem(word: string): string;
}
