export * from './publication-side';
