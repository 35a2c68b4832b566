module.exports = {
  displayName: 'records-feature',
  preset: '../../../jest.preset.js',
  rootDir: __dirname,
};
