module.exports = {
  displayName: 'records-publication-testing',
  preset: '../../../jest.preset.js',
  rootDir: __dirname,
};
